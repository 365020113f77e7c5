"""Which tsconfig.json answers for a TypeScript or JavaScript file in the precise pass
(cg/ingest/resolve/scip.py ``typescript_projects``): a config the compiler cannot load (what it
extends is not installed, it does not parse) and files its program leaves out are indexed as loose
files instead, so the compiler still answers for them. The shapes come from real checkouts: ky
extends "@sindresorhus/tsconfig" and includes only "source", so a fresh clone's tests sat under a
config that left them out, and its tsconfig failed to load at all."""

from __future__ import annotations

import json

from cg.ingest.resolve.scip import typescript_projects
from tests.files import write_tree

HTTP_CLIENT = {
    "source/client.ts": "export class HttpClient {}\n",
    "source/retry.ts": "export function backoff(attempt: number) { return attempt * 100; }\n",
    "test/client.test.ts": "import {HttpClient} from '../source/client.js';\n",
    "scripts/release.js": "console.log('release');\n",
}


def test_a_config_that_extends_a_package_not_installed_leaves_its_files_loose(tmp_path):
    repo = write_tree(
        tmp_path,
        {
            **HTTP_CLIENT,
            # JSON with comments and a trailing comma, as tsconfig files are written
            "tsconfig.json": '{\n  // shared settings\n  "extends": "@acme/tsconfig",\n  "include": ["source"],\n}\n',
        },
    )
    projects, loose = typescript_projects(repo, ["source/client.ts", "test/client.test.ts"])
    assert projects == [] and loose == ["source/client.ts", "test/client.test.ts"]


def test_an_installed_base_config_keeps_the_project_and_its_include_decides(tmp_path):
    repo = write_tree(
        tmp_path,
        {
            **HTTP_CLIENT,
            "tsconfig.json": '{"extends": "@acme/tsconfig", "include": ["source"]}',
            "node_modules/@acme/tsconfig/package.json": json.dumps({"name": "@acme/tsconfig", "tsconfig": "base.json"}),
            "node_modules/@acme/tsconfig/base.json": '{"compilerOptions": {"strict": true}}',
        },
    )
    projects, loose = typescript_projects(repo, ["source/client.ts", "source/retry.ts", "test/client.test.ts"])
    assert projects == [""] and loose == ["test/client.test.ts"]


def test_a_relative_base_that_is_missing_or_broken_leaves_the_files_loose(tmp_path):
    repo = write_tree(tmp_path, {**HTTP_CLIENT, "tsconfig.json": '{"extends": "./tsconfig.base"}'})
    assert typescript_projects(repo, ["source/client.ts"]) == ([], ["source/client.ts"])
    (repo / "tsconfig.base.json").write_text("{ not json")
    assert typescript_projects(repo, ["source/client.ts"]) == ([], ["source/client.ts"])
    (repo / "tsconfig.base.json").write_text('{"include": ["source/**/*.ts"], "exclude": ["source/retry.ts"]}')
    # include and exclude come from the base, relative to the base's folder
    assert typescript_projects(repo, ["source/client.ts", "source/retry.ts"]) == ([""], ["source/retry.ts"])


def test_javascript_belongs_to_a_project_only_with_allow_js(tmp_path):
    repo = write_tree(tmp_path, {**HTTP_CLIENT, "tsconfig.json": "{}"})
    assert typescript_projects(repo, ["source/client.ts", "scripts/release.js"]) == ([""], ["scripts/release.js"])
    (repo / "tsconfig.json").write_text('{"compilerOptions": {"allowJs": true}, "exclude": ["dist"]}')
    assert typescript_projects(repo, ["scripts/release.js"]) == ([""], [])


def test_files_and_a_deeper_config_and_the_out_dir(tmp_path):
    repo = write_tree(
        tmp_path,
        {
            **HTTP_CLIENT,
            "tsconfig.json": '{"files": ["source/client.ts"], "compilerOptions": {"outDir": "build"}}',
            "test/tsconfig.json": '{"compilerOptions": {"outDir": "../build"}, "include": ["**/*"]}',
            "build/client.d.ts": "export declare class HttpClient {}\n",
        },
    )
    projects, loose = typescript_projects(repo, ["source/client.ts", "source/retry.ts", "test/client.test.ts"])
    assert projects == ["", "test"] and loose == ["source/retry.ts"]
    # "files" alone means no "include": the compiler's output folder is no part of either program
    assert typescript_projects(repo, ["build/client.d.ts"]) == ([], ["build/client.d.ts"])
