"""A Ctrl-C is remembered as well as raised (cg/errors.py ``CTRL_C``): a KeyboardInterrupt that lands in
a destructor is printed as "Exception ignored" and lost, and a CI run saw ``cg index`` wait on for a
precise-pass indexer after one. Where a run waits or ends a stage, the remembered Ctrl-C is raised."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cg.errors import CTRL_C, on_ctrl_c
from cg.ingest import pipeline
from cg.ingest.resolve import scip


@pytest.fixture
def pressed():
    CTRL_C.clear()
    yield CTRL_C
    CTRL_C.clear()


def test_the_handler_remembers_and_raises(pressed):
    with pytest.raises(KeyboardInterrupt):
        on_ctrl_c(2, None)
    assert pressed.is_set()


class _Swallowed:
    def __del__(self):
        on_ctrl_c(2, None)  # Ctrl-C landing in a destructor: Python prints it and goes on


def test_a_ctrl_c_lost_in_a_destructor_stops_the_next_stage(pressed):
    _Swallowed()  # the KeyboardInterrupt is ignored here, as in Kùzu's QueryResult.__del__
    with pytest.raises(KeyboardInterrupt):
        pipeline._Stopwatch().lap()


def test_waiting_for_the_precise_pass_stops_and_cancels_it(pressed, monkeypatch, tmp_path: Path):
    monkeypatch.setattr(scip, "run_precise", lambda *args: time.sleep(10))
    job = scip.PreciseJob(tmp_path, {}, {}, 10.0, {})
    cancelled = []
    monkeypatch.setattr(job, "cancel", lambda: cancelled.append(True))
    _Swallowed()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        job.result()
    assert time.monotonic() - started < 1.0 and cancelled == [True]


def test_without_ctrl_c_a_stage_ends_as_before(pressed):
    assert pipeline._Stopwatch().lap() >= 0.0
