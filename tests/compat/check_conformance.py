#!/usr/bin/env python3
"""Checks request bodies sparring sends against the providers' own definitions.

Usage: check_conformance.py --openai FILE --anthropic FILE [--openapi SCHEMA]

Each FILE holds one JSON object per line: `{"case", "target", "body"}`, where
`target` is `openai` (a body for OpenAI itself) or `compatible` (a body for
another OpenAI-compatible server, or for the Anthropic API), and `body` the JSON
body as sparring sent it (captured by the fake server) or would send it.

- OpenAI bodies are checked against the `openai` package's request type
  (`CompletionCreateParamsNonStreaming`, a TypedDict generated from OpenAI's
  OpenAPI document): every key declared, every required key present, every value
  of its declared type, literal or union, recursively; and, when SCHEMA is given
  (the `CreateChatCompletionRequest` part of openai/openai-openapi, kept in
  `tests/compat/openai-openapi/`), against that JSON Schema. Bodies for OpenAI
  itself may carry no parameter the schema marks `deprecated` (`max_tokens`,
  `seed`, …) unless the case lists it in `allow_deprecated` (a `seed` the run
  asked for).
- Anthropic bodies are checked against the `anthropic` package's
  `MessageCreateParamsNonStreaming` the same way. The current SDK declares no
  `temperature` or `top_p` (current models take at most one); a body may carry
  them only when its case lists them in `allow_undeclared` (the run set them),
  and `temperature` must lie in 0..1.

Prints one line per check and exits 1 on the first failure.
"""

import argparse
import collections.abc
import json
import types
import typing

import typing_extensions
from compat_common import Failure, need, read_jsonl, run


# ---------------------------------------------------------------- SDK types

def strip(tp):
    """The type inside Required[], NotRequired[], Annotated[] and type aliases."""
    while True:
        origin = typing.get_origin(tp)
        if origin in (typing_extensions.Required, typing_extensions.NotRequired, typing.Required, typing.NotRequired):
            tp = typing.get_args(tp)[0]
        elif origin is typing.Annotated or origin is typing_extensions.Annotated:
            tp = typing.get_args(tp)[0]
        elif isinstance(tp, getattr(typing, "TypeAliasType", ())) or isinstance(tp, getattr(typing_extensions, "TypeAliasType", ())):
            tp = tp.__value__
        else:
            return tp


def typed_dict_keys(tp):
    hints = typing_extensions.get_type_hints(tp, include_extras=True)
    required = set(getattr(tp, "__required_keys__", set()))
    return hints, required


def errors(value, tp, at, allow_undeclared=frozenset()):
    """Why `value` is not a `tp`, as a list of strings (empty when it is)."""
    tp = strip(tp)
    if tp is typing.Any or tp is object:
        return []
    if tp is type(None) or tp is None:
        return [] if value is None else [f"{at}: expected null, got {value!r:.60}"]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal or origin is typing_extensions.Literal:
        return [] if value in args else [f"{at}: {value!r:.60} is not one of {args}"]
    if origin in (typing.Union, types.UnionType):
        tried = [errors(value, a, at, allow_undeclared) for a in args]
        if any(not e for e in tried):
            return []
        # The closest member's errors say most.
        return min(tried, key=len)
    if typing_extensions.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{at}: expected an object ({tp.__name__}), got {value!r:.60}"]
        hints, required = typed_dict_keys(tp)
        out = []
        for k in sorted(required - set(value)):
            out.append(f"{at}: `{k}` is required by {tp.__name__}")
        for k, v in value.items():
            if k not in hints:
                if k not in allow_undeclared:
                    out.append(f"{at}: `{k}` is not declared by {tp.__name__}")
                continue
            out.extend(errors(v, hints[k], f"{at}.{k}", frozenset()))
        return out
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, typing.Iterable, typing.Sequence) or (
        origin is not None and getattr(origin, "__name__", "") in ("SequenceNotStr",)
    ):
        if not isinstance(value, list):
            return [f"{at}: expected a list, got {value!r:.60}"]
        item = args[0] if args else typing.Any
        out = []
        for i, v in enumerate(value):
            out.extend(errors(v, item, f"{at}[{i}]"))
        return out
    if getattr(tp, "__name__", "") == "SequenceNotStr" or (origin is not None and "SequenceNotStr" in repr(origin)):
        if not isinstance(value, list):
            return [f"{at}: expected a list of strings, got {value!r:.60}"]
        return [] if all(isinstance(v, str) for v in value) else [f"{at}: expected strings"]
    if origin in (dict, collections.abc.Mapping, typing.Dict, typing.Mapping):
        if not isinstance(value, dict):
            return [f"{at}: expected an object, got {value!r:.60}"]
        val = args[1] if len(args) == 2 else typing.Any
        out = []
        for k, v in value.items():
            out.extend(errors(v, val, f"{at}.{k}"))
        return out
    if tp is str:
        return [] if isinstance(value, str) else [f"{at}: expected a string, got {value!r:.60}"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{at}: expected a boolean, got {value!r:.60}"]
    if tp is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{at}: expected an integer, got {value!r:.60}"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{at}: expected a number, got {value!r:.60}"]
    if tp is dict:
        return [] if isinstance(value, dict) else [f"{at}: expected an object"]
    if tp is list:
        return [] if isinstance(value, list) else [f"{at}: expected a list"]
    if isinstance(tp, type) and hasattr(tp, "model_fields"):
        # A response model the SDK also accepts as input (its Python object),
        # which a JSON body cannot be.
        return [f"{at}: a {tp.__name__} object, which JSON cannot be"]
    raise Failure(f"{at}: the checker does not know the type {tp!r}")


# ---------------------------------------------------------------- OpenAPI

def openapi_validator(path):
    import jsonschema
    import referencing

    doc = json.load(open(path, encoding="utf-8"))

    def nullable(schema):
        """OpenAPI's `nullable: true` as JSON Schema: the value may also be null."""
        if isinstance(schema, dict):
            schema = {k: nullable(v) for k, v in schema.items()}
            if schema.pop("nullable", False):
                return {"anyOf": [schema, {"type": "null"}]}
            return schema
        if isinstance(schema, list):
            return [nullable(v) for v in schema]
        return schema

    raw = doc["components"]["schemas"]
    doc = nullable(doc)
    resource = referencing.Resource.from_contents(doc, default_specification=referencing.jsonschema.DRAFT202012)
    registry = referencing.Registry().with_resource("urn:openai", resource)
    validator = jsonschema.Draft202012Validator({"$ref": "urn:openai#/components/schemas/CreateChatCompletionRequest"}, registry=registry)
    return validator, raw, doc.get("x-source", {})


def deprecated_properties(schemas):
    """The request's top-level properties the schema marks deprecated."""
    out = set()

    def walk(schema, depth):
        if depth > 4 or not isinstance(schema, dict):
            return
        ref = schema.get("$ref")
        if isinstance(ref, str):
            walk(schemas.get(ref.rsplit("/", 1)[1]), depth + 1)
        for part in schema.get("allOf", []):
            walk(part, depth + 1)
        for name, prop in (schema.get("properties") or {}).items():
            if isinstance(prop, dict) and prop.get("deprecated"):
                out.add(name)

    walk(schemas["CreateChatCompletionRequest"], 0)
    return out


# ---------------------------------------------------------------- checks

# The request parameters OpenAI's OpenAPI document marks `deprecated` (at
# openai/openai-openapi f85dbe2, API 2.3.0), for when the document itself is
# not at hand; with it, this list must be part of what it marks.
DEPRECATED = {"function_call", "functions", "max_tokens", "seed", "user"}


def check_openai(cases, openapi):
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    validator = None
    deprecated = DEPRECATED
    if openapi:
        validator, schemas, source = openapi_validator(openapi)
        deprecated = deprecated_properties(schemas)
        need(DEPRECATED <= deprecated, f"the schema marks {sorted(DEPRECATED)} deprecated: {sorted(deprecated)}")
        print(f"openapi schema {source.get('repository')}@{(source.get('commit') or '')[:12]} (OpenAPI {source.get('openapi')}, API {source.get('info_version')}); deprecated: {sorted(deprecated)}")
    else:
        print(f"no OpenAPI schema given: checked against the openai package's types, deprecated parameters {sorted(DEPRECATED)}")
    for n, case in enumerate(cases, 1):
        where = f"openai body {n} ({case['case']})"
        body = case["body"]
        errs = errors(body, CompletionCreateParamsNonStreaming, "body")
        need(not errs, f"{where}: not a CompletionCreateParamsNonStreaming of the openai package: {errs[:5]}")
        if validator is not None:
            found = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
            need(not found, f"{where}: breaks the OpenAPI schema: {[f'{list(e.absolute_path)}: {e.message[:160]}' for e in found[:3]]}")
        if case["target"] == "openai":
            allowed = set(case.get("allow_deprecated", []))
            used = sorted((set(body) & deprecated) - allowed)
            need(not used, f"{where}: sends deprecated parameters {used} to OpenAI")
    print(f"ok openai: {len(cases)} request bodies match the openai package's types" + (" and the OpenAPI schema" if validator else ""))


def check_anthropic(cases):
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    for n, case in enumerate(cases, 1):
        where = f"anthropic body {n} ({case['case']})"
        body = case["body"]
        allow = frozenset(case.get("allow_undeclared", []))
        need(allow <= {"temperature", "top_p"}, f"{where}: only temperature and top_p may go undeclared")
        errs = errors(body, MessageCreateParamsNonStreaming, "body", allow)
        need(not errs, f"{where}: not a MessageCreateParamsNonStreaming of the anthropic package: {errs[:5]}")
        if "temperature" in body:
            t = body["temperature"]
            need(isinstance(t, (int, float)) and 0 <= t <= 1, f"{where}: temperature {t} outside the API's 0..1")
        roles = [m["role"] for m in body["messages"]]
        need(roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:])), f"{where}: roles alternate from user: {roles}")
        for m in body["messages"]:
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("type") == "text":
                    need(b["text"].strip(), f"{where}: no empty text block")
    print(f"ok anthropic: {len(cases)} request bodies match the anthropic package's types")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--openai", required=True)
    p.add_argument("--anthropic", required=True)
    p.add_argument("--openapi")
    a = p.parse_args()
    import anthropic
    import openai

    print(f"openai {openai.__version__}, anthropic {anthropic.__version__}")
    openai_cases = read_jsonl(a.openai)
    anthropic_cases = read_jsonl(a.anthropic)
    need(openai_cases and anthropic_cases, "there are bodies to check")
    need(any(c["target"] == "openai" for c in openai_cases), "some bodies are for OpenAI itself")
    check_openai(openai_cases, a.openapi)
    check_anthropic(anthropic_cases)
    print("all conformance checks passed")


if __name__ == "__main__":
    run(main)
