#!/usr/bin/env python3
"""Extracts the part of OpenAI's OpenAPI document that the conformance test reads.

Usage: extract_openai_schema.py OPENAPI_JSON [COMMIT] > chat-completions-request.json

OPENAPI_JSON is `openapi.json` from the openai/openai-openapi repository (MIT
licence). Writes `CreateChatCompletionRequest` and every schema it references,
transitively, exactly as the document has them, under `components.schemas`,
with the document's version and commit noted in `x-source`. The cut in use
is `openai-openapi/chat-completions-request.json` beside this script, kept
with the document's MIT LICENSE and its commit (openai-openapi/README.md).
"""

import json
import sys


def refs(value, out):
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            out.add(ref.rsplit("/", 1)[1])
        for v in value.values():
            refs(v, out)
    elif isinstance(value, list):
        for v in value:
            refs(v, out)


def main():
    doc = json.load(open(sys.argv[1], encoding="utf-8"))
    schemas = doc["components"]["schemas"]
    keep, todo = set(), ["CreateChatCompletionRequest"]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        found = set()
        refs(schemas[name], found)
        todo.extend(found - keep)
    out = {
        "x-source": {
            "repository": "openai/openai-openapi",
            "file": "openapi.json",
            "openapi": doc["openapi"],
            "info_version": doc["info"]["version"],
            "commit": sys.argv[2] if len(sys.argv) > 2 else None,
            "licence": "MIT, see LICENSE",
        },
        "$ref": "#/components/schemas/CreateChatCompletionRequest",
        "components": {"schemas": {k: schemas[k] for k in sorted(keep)}},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
