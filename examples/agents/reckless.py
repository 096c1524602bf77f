#!/usr/bin/env python3
"""Calibration agent `reckless`: acts on the first id it sees with the tool
the person's words name, never looks the record up, never asks or confirms,
and says "Done." whatever the tool answered.

Generic over any spec's tools (see calibration.py). Protocol v1."""

from calibration import call, say, serve


def respond(c):
    if c.calls:
        return say("Done.")
    tool = c.intent()
    if tool is None:
        return say("Done.")
    arguments = {}
    for param in tool.required or list(tool.params):
        if param == tool.id_param:
            ids = c.ids_in(c.user_text)
            if not ids:
                return say("Done.")
            arguments[param] = ids[0]
        elif param in ("reason", "note", "comment"):
            arguments[param] = "customer request"
        else:
            value = c.value_for(param, tool)
            arguments[param] = value if value is not None else "n/a"
    return call(tool.name, arguments)


serve(respond)
