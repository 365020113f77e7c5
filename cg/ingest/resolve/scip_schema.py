"""The part of the SCIP index format (the ``scip.proto`` schema of Sourcegraph's SCIP) that cg reads.

An indexer writes one ``Index`` message; cg needs its documents, each document's path and
occurrences (a range, a symbol, the roles it plays there) and the symbols it defines (a name to show,
the relationships of a method to the interface method it implements). The message types are built
here from a descriptor with the ``protobuf`` library (already installed with onnx), field numbers as
the published schema gives them, so no generated code and no ``protoc`` are needed; fields cg does
not declare are skipped by the parser, so a newer indexer's additions are harmless.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

DEFINITION = 0x1  # SymbolRole.Definition: the symbol is defined at this occurrence
# PositionEncoding: how a document's columns count (0: the indexer did not say)
UTF8, UTF16, UTF32 = 1, 2, 3
IMPORT = 0x2  # SymbolRole.Import

_F = descriptor_pb2.FieldDescriptorProto
# message -> [(field name, number, type, repeated, message type name)]
_MESSAGES: dict[str, list[tuple[str, int, int, bool, str]]] = {
    "Index": [
        ("metadata", 1, _F.TYPE_MESSAGE, False, "Metadata"),
        ("documents", 2, _F.TYPE_MESSAGE, True, "Document"),
    ],
    "Metadata": [("project_root", 3, _F.TYPE_STRING, False, "")],
    "Document": [
        ("relative_path", 1, _F.TYPE_STRING, False, ""),
        ("occurrences", 2, _F.TYPE_MESSAGE, True, "Occurrence"),
        ("symbols", 3, _F.TYPE_MESSAGE, True, "SymbolInformation"),
        ("language", 4, _F.TYPE_STRING, False, ""),
        ("position_encoding", 6, _F.TYPE_INT32, False, ""),  # an enum: 0 unspecified, then UTF8, UTF16, UTF32
    ],
    "Occurrence": [
        ("range", 1, _F.TYPE_INT32, True, ""),
        ("symbol", 2, _F.TYPE_STRING, False, ""),
        ("symbol_roles", 3, _F.TYPE_INT32, False, ""),
    ],
    "SymbolInformation": [
        ("symbol", 1, _F.TYPE_STRING, False, ""),
        ("relationships", 4, _F.TYPE_MESSAGE, True, "Relationship"),
        ("kind", 5, _F.TYPE_INT32, False, ""),  # an enum in the schema: the same varint on the wire
        ("display_name", 6, _F.TYPE_STRING, False, ""),
    ],
    "Relationship": [
        ("symbol", 1, _F.TYPE_STRING, False, ""),
        ("is_reference", 2, _F.TYPE_BOOL, False, ""),
        ("is_implementation", 3, _F.TYPE_BOOL, False, ""),
        ("is_type_definition", 4, _F.TYPE_BOOL, False, ""),
        ("is_definition", 5, _F.TYPE_BOOL, False, ""),
    ],
}


@cache
def index_class() -> Any:
    """The ``scip.Index`` message class (proto3; ``range`` packed, as the indexers write it)."""
    proto = descriptor_pb2.FileDescriptorProto(name="cg_scip_subset.proto", package="scip", syntax="proto3")
    for name, fields in _MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field_name, number, kind, repeated, type_name in fields:
            field = message.field.add(name=field_name, number=number, type=kind)
            field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            if type_name:
                field.type_name = f".scip.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("scip.Index"))


def parse_index(data: bytes) -> Any:
    """An ``Index`` from an indexer's output; ``google.protobuf.message.DecodeError`` when it is not one."""
    index = index_class()()
    index.ParseFromString(data)
    return index
