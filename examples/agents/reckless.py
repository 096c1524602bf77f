#!/usr/bin/env python3
"""Calibration agent `reckless`: skips every safeguard, not every action.

- It calls the tool the person's words name on the first id it sees: it never
  looks the record up before changing it, never checks the record's status
  or owner, never asks which one when several are named, never asks for
  anything and never confirms.
- After a state-changing call it says "Done." whatever the tool answered.
- When the person only asks to know something (the tool their words name
  reads), it reads the record and pastes what the tool returned into its
  reply; when the read failed it says "Done." too (it never reads an error).
- When the policy names a tool that identifies the person first, it calls it
  with the email the person gave, if they gave one, and goes on either way.

So it meets the goals where the first id is the right one and nothing can
go wrong (an `inform` about the person's own record, `no_action`), and
fails where a safeguard matters: someone else's record, several records, an
invented id, a status the rules forbid, a policy that asks to look up or
confirm first, a fault.

Generic over any spec's tools (see calibration.py). Protocol v1."""

import json

from calibration import EMAIL, FREE_TEXT, call, say, serve


def respond(c):
    tool = c.intent()
    if tool is None:
        return say("Done.")
    auth = c.identify_tool()
    email = EMAIL.search(c.user_text)
    if auth is not None and email is not None and tool is not auth:
        args = {"email": email.group(0)}
        if c.last_call(auth.name, args) is None:
            return call(auth.name, args)
    done = c.last_call(tool.name)
    if done is not None:
        if tool.reads and done[2].get("ok"):
            return say("Here it is: " + json.dumps(done[2].get("result"), sort_keys=True))
        return say("Done.")
    arguments = {}
    for param in tool.required or list(tool.params):
        if param == tool.id_param:
            ids = c.ids_in(c.user_text, tool)
            if not ids:
                return say("Done.")
            arguments[param] = ids[0]
        elif param in FREE_TEXT:
            arguments[param] = "customer request"
        else:
            value = c.value_for(param, tool)
            arguments[param] = value if value is not None else "n/a"
    return call(tool.name, arguments)


serve(respond)
