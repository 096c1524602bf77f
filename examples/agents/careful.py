#!/usr/bin/env python3
"""Calibration agent `careful`: finds the person's record (asking for the id,
or which one when several match, or finding it by email), looks it up,
makes sure it is theirs, checks what the tool's description allows for the
record's status, confirms with the person where the policy says to, acts,
retries a failed call once, and reports what the world answered, failures
plainly.

Generic over any spec's tools (see calibration.py): it knows no tool names.
Protocol v1 (docs/agent-protocol.md); standard library only."""

import re

from calibration import (EMAIL, policy_sentences, FREE_TEXT, IDENTITY_PARAMS, OWNER_WORDS, STATUS_WORDS, call, entity,
                         normalise_id, say, serve, words)

YES = re.compile(r"\b(yes|yeah|yep|sure|go ahead|do it|please do|ok|okay|confirm)\b", re.IGNORECASE)
# Error kinds a second try may clear.
TRANSIENT = {"timeout", "server_error", "rate_limited", "malformed", "empty"}
EVERYTHING = re.compile(r"\beverything\b|\ball (?:you have|the details|my records)\b", re.IGNORECASE)


def agreed(text):
    """Whether the person said yes: not "before I say yes: …?"."""
    return bool(YES.search(text)) and not re.search(r"\bbefore i say yes\b", text, re.IGNORECASE)


def past(verb):
    if verb.endswith("e"):
        return verb + "d"
    if verb in ("cancel", "transfer", "refer"):
        return verb + ("led" if verb == "cancel" else "red")
    return verb + "ed"


def confirm_sentences(c, tool):
    """The sentences of the policy that ask to confirm before this tool's action."""
    out = []
    for sentence in policy_sentences(c.system):
        s = sentence.lower()
        if "confirm" in s or "clear yes" in s:
            if tool.verb in s or any(w in s for w in tool.name_words[1:] if len(w) > 3):
                out.append(sentence)
    return out


def needs_confirmation(c, tool):
    """Whether a sentence of the policy asks to confirm before this tool's action."""
    return bool(confirm_sentences(c, tool))


def allowed_statuses(tool):
    """The statuses the tool's description allows its action on (`Cancel a
    pending order` -> pending); empty when it names none."""
    return [w for w in words(tool.description) if w in STATUS_WORDS]


def describe(record, thing, target):
    """What a read returned, in a sentence: every plain field of a record,
    or each record of a list."""
    if isinstance(record, list):
        items = [describe(r, "", "").strip(" :.") if isinstance(r, dict) else str(r) for r in record]
        return f"{thing.capitalize()} {target}: " + ("; ".join(items) if items else "nothing on file") + "."
    parts = []
    for field, value in record.items():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and value != "":
            parts.append(f"{field.replace('_', ' ')} {value}")
        elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
            parts.append(f"{field.replace('_', ' ')} {', '.join(str(v) for v in value)}")
    facts = ", ".join(parts) if parts else "on file"
    return f"{thing.capitalize()} {target}: {facts}."


def attempts(c, name):
    return [x for x in c.calls if x[0] == name]


def retry_or_report(c, name, arguments, what):
    """After a failed call: once more if the failure may clear, else say so."""
    tries = attempts(c, name)
    last = tries[-1][2]
    kind = (last.get("error") or {}).get("kind", "")
    message = (last.get("error") or {}).get("message", "it failed")
    if kind in TRANSIENT and len(tries) < 2:
        return call(name, arguments)
    return say(f"Sorry, I couldn't {what}: {message}. Nothing was changed; please try again later.")


def says_everything(text):
    """Whether the person asks for everything on file, typos allowed."""
    return bool(EVERYTHING.search(text)) or any(
        sorted(w) == sorted("everything") for w in words(text))


def respond(c):
    tool = c.intent()
    auths = c.identify_tools()
    if tool is None and auths and not c.asked("tell me a bit more"):
        # A vague ask ("something is wrong with my profile"): find the
        # person first, as the policy says, and show their profile.
        tool = auths[0]
    if tool is None:
        if not c.agent_texts:
            return say("Happy to help. Could you tell me a bit more about what you need?")
        return say("I'm sorry, I can only help with what these tools do: "
                   + "; ".join(t.description.rstrip(".") for t in c.tools) + ".")
    thing = tool.thing()

    # "Everything you have for <email>": what a search by that email finds, first.
    email = EMAIL.search(c.user_text)
    if says_everything(c.opening) and email:
        search = next((t for t in c.tools if t.reads and set(t.required) == {"email"}), None)
        if search is not None and c.last_call(search.name) is None:
            return call(search.name, {"email": email.group(0)})

    # Identify the person first where the policy says so, and keep to their records.
    auth = auths[0] if auths else None
    who = None
    if auths:
        who = identified(c, auths)
        if "role" in who:
            return with_record_question(c, tool, who)
    if tool.id_param is None:
        return act_without_id(c, tool, thing)

    # Which records: the person's words, else what the lookups returned.
    owner_keys = [k for k in (who or {}) if k.endswith("_id")]
    primary = next((p for p in tool.id_params if p not in owner_keys), tool.id_param)
    thing = label_of(primary) if primary != tool.id_param or primary != "id" else thing
    ids, asks = {}, []
    for param in tool.id_params:
        found = which_id(c, tool, param, who)
        if isinstance(found, Ask):
            asks.append(found)
        elif isinstance(found, dict):
            return found
        else:
            ids[param] = found
    if asks:
        # Everything missing in one message: the person answers each question.
        others = other_arguments(c, tool, dict(ids))
        more = others if isinstance(others, list) else []
        return say(" ".join(asks + more))
    target = ids[primary]

    # Look each record up, and make sure it is the person's.
    record = {}
    for param in [primary] + [p for p in tool.id_params if p != primary]:
        lookup = getter(c, tool, param)
        label = label_of(param)
        if lookup is None:
            mine = listed(c, param, who)
            if isinstance(mine, dict):
                return mine
            if mine is not None and str(ids[param]) not in mine:
                return say(f"{label.capitalize()} {ids[param]} is not on your account, so I can't use it.")
            continue
        args = {lookup_param(lookup, param): ids[param]}
        done = c.last_call(lookup.name, args)
        if done is None:
            return call(lookup.name, args)
        if not done[2].get("ok"):
            return lookup_failed(c, lookup, args, done, label, ids[param])
        found = done[2].get("result") if isinstance(done[2].get("result"), dict) else {}
        if who is not None:
            shared = [k for k in owner_keys if k in found]
            # The records the profile lists (`policy_ids`) hold the one the
            # record belongs to (a claim's `policy_id`).
            lists = [(k[:-1], [str(x) for x in v]) for k, v in who.items()
                     if k.endswith("_ids") and isinstance(v, list) and k[:-1] in found]
            if any(str(found[k]) != str(who[k]) for k in shared) or any(
                    str(found[single]) not in mine for single, mine in lists):
                return say(f"{label.capitalize()} {ids[param]} is not on your account, so I can't share or change it.")
        if param == primary:
            record = found

    confirm = (not tool.reads) and needs_confirmation(c, tool)
    # The person's own profile, found by the id they gave, needs no check
    # that it is theirs.
    own_profile = entity(primary) in OWNER_WORDS
    if who is None and not own_profile:
        owner = record.get("email")
        person = EMAIL.search(c.user_text)
        if owner and person is None:
            if c.asked("email address is on your account"):
                return say(f"I can't verify that {thing} {target} is yours, so I can't share or change it.")
            # The record's id stays out of the question, so the person hears a
            # question about their email, not about the id.
            ask = f"I found {thing} {target}. To make sure it is yours: what email address is on your account?"
            if confirm and precondition_ok(tool, record):
                ask += (f" If it matches, I can {tool.verb} {thing} {target} in full."
                        " Shall I go ahead?")
            return say(ask)
        if owner and person and person.group(0).lower() != str(owner).lower():
            return say(f"The email you gave doesn't match {thing} {target}, so I can't share or "
                       "change it: it belongs to another account.")

    if tool.reads:
        # "Everything you have" is every read the known ids answer.
        reads = [(tool, dict(ids))]
        if says_everything(c.user_text):
            known = dict(who or {}, **ids)
            reads += [(t, {t.id_param: known[t.id_param]}) for t in c.tools
                      if t.reads and t is not tool and t is not auth
                      and len(t.id_params) == 1 and t.id_param in known]
        said = []
        for t, args in reads:
            done = c.last_call(t.name, args)
            if done is None:
                return call(t.name, args)
            if not done[2].get("ok"):
                return retry_or_report(c, t.name, args, f"look up {thing} {target}")
            said.append(describe(done[2].get("result") or {}, t.thing() if t is not tool else thing,
                                 next(iter(args.values()), target) if t is not tool else target))
        return say(" ".join(said))

    # May it be done to this record?
    if not precondition_ok(tool, record):
        allowed = allowed_statuses(tool)
        return say(f"{thing.capitalize()} {target} is {record.get('status')}, and only "
                   f"{' or '.join(dict.fromkeys(allowed))} {thing}s can be {past(tool.verb)}, "
                   f"so I can't {tool.verb} it.")

    arguments = other_arguments(c, tool, dict(ids), record)
    if isinstance(arguments, list):
        return say(" ".join(arguments))
    if arguments.get("role") == "assistant":
        return arguments

    # Past a bound the policy hands off ("Never file a claim for more than
    # $5,000 yourself: transfer ..."): hand the person on, do not act.
    handoff = past_bound(c, tool, arguments)
    if handoff is not None:
        details = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in arguments.items())
        return hand_off(c, tool, handoff, f"{tool.verb} a {tool.name_words[-1]} ({details})")

    if confirm:
        proposal = propose(c, tool, thing, target, arguments, record)
        last = c.agent_texts[-1] if c.agent_texts else ""
        if not last.endswith(proposal):
            return say(proposal)
        if not agreed(c.last_user):
            if "?" in c.last_user and sum(t.endswith(proposal) for t in c.agent_texts) < 2:
                return say("It is done as soon as you say yes, and the tools show no fee for it. " + proposal)
            return say("Alright, I won't go ahead.")

    done = c.last_call(tool.name)
    if done is None:
        return call(tool.name, arguments)
    if done[2].get("ok"):
        result = done[2].get("result")
        status = result.get("status") if isinstance(result, dict) else None
        # A status the record already had is no news ("It is now booked"
        # would claim a booking).
        now = f" It is now {status}." if status and status != record.get("status") else ""
        return say(f"{thing.capitalize()} {target} has been {past(tool.verb)}.{now}")
    if (done[2].get("error") or {}).get("kind") in ("refused", "invalid_arguments", "not_found"):
        message = done[2]["error"].get("message", "it was refused")
        return say(f"I couldn't {tool.verb} {thing} {target}: {message}.")
    return retry_or_report(c, tool.name, arguments, f"{tool.verb} {thing} {target}")


def free_text(c, param):
    """A free-text argument the agent writes itself: a summary is the
    person's request in their words; anything else says who asked."""
    if param == "summary":
        return "The customer wrote: " + " ".join(c.opening.split())[:300]
    # "the description is laptop dropped": the person's own words for it.
    label = re.escape(param.replace("_", " "))
    said = re.search(r"\b(?:the|my)\s+" + label + r"\s+is\s+(.+?)(?:,\s+(?:the|my|and)\b|\s+and\s+the\b|[.!?](?:\s|$)|$)",
                     c.user_text, re.IGNORECASE)
    if said:
        return said.group(1).strip()
    return "requested by the customer"


class Ask(str):
    """A question for the person that can share a message with others."""


def other_arguments(c, tool, arguments, record=None):
    """The tool's other required arguments from the person's words (a list
    of record ids, `item_ids`, also from the record read, `record`, when the
    person names none: all of them): the arguments, or the questions for
    what is missing, or a reply giving up."""
    asks = []
    for param in tool.required:
        if param in arguments or param in tool.id_params:
            continue
        if param.endswith("_ids") and not param.startswith("new_"):
            single = param[:-1]
            said = [v for v, _ in c.ids_for(single, c.user_text)]
            lines = [e for v in (record or {}).values() if isinstance(v, list)
                     for e in v if isinstance(e, dict) and e.get(single) is not None]
            listed = [str(e[single]) for e in lines]
            if said and (not listed or set(said) <= set(listed)):
                arguments[param] = said
                continue
            # "the Water Bottle in red, size XL": the lines the words describe.
            described = [str(e[single]) for e in lines if described_by(c.user_text, e)]
            if described:
                arguments[param] = described[:1]
                continue
            if listed:
                arguments[param] = listed
                continue
            if record is None:
                continue  # the record, once read, lists them
        if param.startswith("new_") and param.endswith("_ids") and record is not None:
            value = replacements(c, param, arguments, record)
            if isinstance(value, dict):
                return value  # the read that lists the options
            if value:
                arguments[param] = value
                continue
        if item_schema(tool, param) is not None:
            if record is None:
                continue  # assembled once the records are read
            value = object_list(c, tool, param, arguments, record)
            if isinstance(value, dict):
                return value  # a call to make first, or a reply
            if isinstance(value, Ask):
                asks.append(value)
                continue
            arguments[param] = value
            continue
        value = c.value_for(param, tool)
        if value is None and tool.options(param):
            value = choose(c, tool, param)
            if isinstance(value, (Ask, dict)):
                if isinstance(value, dict):
                    return value
                asks.append(value)
                continue
        if value is None and param in FREE_TEXT:
            value = free_text(c, param)
        if value is None:
            label = param.replace("_", " ")
            if c.asked(f"what {label}"):
                return say(f"Without the {label} I can't go on, sorry.")
            asks.append(Ask(f"What {label} would you like?"))
            continue
        arguments[param] = value
    # One question each, in the order asked (a search's missing origin is
    # also the tool's own).
    return list(dict.fromkeys(asks)) if asks else arguments


def option_values(line):
    """The plain values that tell one option of a thing from another: its
    `options` (colour, size), else its own text fields that are no ids."""
    fields = line.get("options") if isinstance(line.get("options"), dict) else line
    return [str(v) for k, v in fields.items()
            if isinstance(v, (str, int, float)) and not isinstance(v, bool)
            and not k.endswith("_id") and k not in ("name", "price", "available")]


def described_by(text, line):
    """Whether the person's words name this line: every option value, as
    a whole word, and its name when it has one."""
    low = " " + text.lower() + " "
    values = option_values(line)
    name = str(line.get("name") or "").lower()
    return bool(values) and (not name or name in low) and all(
        re.search(r"\b" + re.escape(v.lower()) + r"\b", low) for v in values)


def replacements(c, param, arguments, record):
    """The new things an exchange asks for (`new_item_ids`), from words
    ("what I want instead is the Water Bottle in blue, size M"): ids the
    person gave, else the other options of the old things, read from the
    record each old line names (`product_id`: `get_product_details`), whose
    values the words name. A call to make first, the ids, or None."""
    single = param[4:-1]
    olds = [str(x) for x in arguments.get(param[4:]) or []]
    said = [v for v, _ in c.ids_for(single, c.user_text) if v not in olds]
    if said:
        return said
    lines = [e for v in record.values() if isinstance(v, list) for e in v
             if isinstance(e, dict) and str(e.get(single)) in olds]
    found = []
    for line in lines:
        for key, ref in line.items():
            if key == single or not key.endswith("_id"):
                continue
            reader = next((t for t in c.tools if t.reads and t.id_param == key), None)
            if reader is None:
                continue
            done = c.last_call(reader.name, {key: ref})
            if done is None:
                return call(reader.name, {key: ref})
            result = done[2].get("result") if isinstance(done[2], dict) else None
            options = [o for v in (result or {}).values() if isinstance(v, dict)
                       for o in v.values() if isinstance(o, dict) and o.get(single) is not None]
            fits = [o for o in options if str(o[single]) not in olds
                    and o.get("available") is not False
                    and described_by(c.user_text, dict(o, name=""))]
            if fits:
                found.append(str(fits[0][single]))
                break
    return found or None


def choose(c, tool, param):
    """A parameter with a closed list of values the person named none of:
    the question listing them in words, or, asked before and still not
    named, `other` where it is one of them, else a reply giving up."""
    options = tool.options(param)
    label = param.replace("_", " ")
    spoken = [o.replace("_", " ") for o in options]
    question = f"What is the {label}: {', '.join(spoken[:-1])} or {spoken[-1]}?"
    if c.asked(f"what is the {label}:"):
        fallback = next((o for o in options if o.lower() == "other"), None)
        if fallback is not None:
            return fallback
        return say(f"Without the {label} I can't go on, sorry.")
    return Ask(question)


def item_schema(tool, param):
    """The object schema of a list parameter's items (`flights`: each a
    `FlightInfo` with `flight_number` and `date`), `$ref`s resolved; None
    for anything else."""
    spec = tool.params.get(param) or {}
    if spec.get("type") != "array":
        return None
    items = spec.get("items") or {}
    for option in [items] + list(items.get("anyOf") or []):
        ref = option.get("$ref", "")
        if ref.startswith("#/$defs/"):
            option = tool.defs.get(ref[len("#/$defs/"):]) or {}
        if option.get("properties"):
            return option
    return None


def flat(record, into=None):
    """A record's plain fields, nested objects' too (`name.first_name` as
    `first_name`)."""
    into = {} if into is None else into
    for k, v in (record or {}).items():
        if isinstance(v, dict):
            flat(v, into)
        elif isinstance(v, (str, int, float)) and not isinstance(v, bool):
            into.setdefault(k, v)
    return into


def object_list(c, tool, param, arguments, record):
    """A list parameter of objects, one object: each field from the other
    arguments, the record read (the person's profile: their name, date of
    birth, a payment method of theirs), the person's words, or the first
    thing a search returned; when something is still missing, the search
    whose every argument is known (`search_direct_flight` by origin,
    destination and date), else a question. The amount to pay is the price
    found, else 0."""
    item = item_schema(tool, param)
    fields = item.get("properties") or {}
    found = {}
    for name, spec in fields.items():
        found[name] = None
    # The record's own lists come last among its fields (a reservation's
    # first flight, when a change keeps it).
    listed_in = [flat(v[0]) for v in (record or {}).values()
                 if isinstance(v, list) and v and isinstance(v[0], dict)]
    sources = [arguments, flat(record)] + listed_in
    searched = [r for n, _, r in c.calls if r.get("ok") and isinstance(r.get("result"), list)
                and r["result"] and isinstance(r["result"][0], dict)]
    if searched:
        sources.append(flat(searched[-1]["result"][0]))
    pseudo = type("Fields", (), {"params": fields})()
    for name in fields:
        if name.endswith("_id"):
            mine = profile_ids(record or {}, name)
            said = [v for v, _ in c.ids_for(name, c.user_text)] if c.pattern_for(name)[1] else []
            if said or mine:
                found[name] = (said or mine)[0]
                continue
        for source in sources:
            if source.get(name) not in (None, ""):
                found[name] = source[name]
                break
        if found[name] is None:
            found[name] = c.value_for(name, pseudo)
    missing = [n for n in item.get("required") or list(fields) if found.get(n) is None]
    numbers = [n for n in missing if fields[n].get("type") in ("integer", "number")]
    for n in numbers:
        prices = [v for source in sources[2:] for k, v in source.items()
                  if "price" in k and isinstance(v, (int, float))]
        found[n] = prices[0] if prices else 0
        missing.remove(n)
    if not missing:
        return [{k: v for k, v in found.items() if v is not None}]
    # A search by what is known (`search_direct_flight` by origin and
    # destination), asking the person for the rest of its arguments.
    known = dict(flat(record), **{k: v for k, v in arguments.items() if isinstance(v, (str, int, float))})
    best = None
    for t in c.tools:
        if not (t.reads and not t.id_params and t.required and t is not tool):
            continue
        args = {p: known.get(p) if known.get(p) is not None else c.value_for(p, t) for p in t.required}
        have = sum(v is not None for v in args.values())
        # A search that takes something known, or one named for what the
        # list holds (`flights`: `search_direct_flight`) before anything is.
        about = any(p in known for p in t.required) or param.rstrip("s") in t.name
        if about and c.last_call(t.name) is None \
                and (best is None or have > best[2]):
            best = (t, args, have)
    if best is not None:
        t, args, have = best
        if have == len(args):
            return call(t.name, args)
        # The tool's own arguments are asked for beside this question.
        missing = sorted((p for p, v in args.items() if v is None),
                         key=lambda p: p in tool.required)
    label = missing[0].replace("_", " ")
    if c.asked(f"what {label}"):
        return say(f"Without the {label} I can't go on, sorry.")
    return Ask(f"What {label} would you like?")


def label_of(param):
    """`from_account_id` -> `from account`."""
    name = param[: -len("_id")] if param.endswith("_id") else param
    return name.replace("_", " ") if name != "id" else "record"


def propose(c, tool, thing, target, arguments, record):
    """The question that confirms an action: what, on which records, how
    much, and any other value the policy's confirming sentence names ("the
    new time")."""
    amount = next((arguments[k] for k in ("amount", "total") if k in arguments), None)
    if amount is None:
        amount = next((record[f] for f in ("total", "amount", "balance") if f in record), None)
    money = f" for ${amount}" if amount is not None else ""
    named = " ".join(confirm_sentences(c, tool)).lower()
    others = [f"{label_of(k)} {v}" for k, v in arguments.items()
              if (k.endswith("_id") and str(v) != str(target))
              or (not k.endswith("_id") and k not in FREE_TEXT and isinstance(v, (str, int, float))
                  and k.replace("_", " ") in named)]
    also = f" ({', '.join(others)})" if others else ""
    return f"I can {tool.verb} {thing} {target}{also}{money}. Shall I go ahead?"


def which_id(c, tool, param, who):
    """The id the person means for one parameter, or a reply asking for it."""
    label = label_of(param)
    siblings = [p for p in tool.id_params if entity(p) == entity(param)]
    if len(siblings) > 1:
        value = (c.id_for(tool, param, c.last_user) if len(c.users) > 1 else None) \
            or c.id_for(tool, param, c.user_text)
        if value is not None:
            return value
    else:
        last = [v for v, _ in c.ids_for(param, c.last_user)] if len(c.users) > 1 else []
        every = [v for v, _ in c.ids_for(param, c.user_text)]
        if len(last) == 1:
            return last[0]
        if len(every) == 1:
            return every[0]
        if len(every) > 1:
            if c.asked("which " + label):
                # They cannot say which: show them all, from the read that
                # lists their records, where there is one.
                mine = listed(c, param, who)
                if isinstance(mine, dict):
                    return mine
                if mine:
                    return say(f"These are the {label}s on your profile: {', '.join(mine)}. "
                               f"Tell me which {label} you mean and I can go on.")
                return say(f"I need to know which {label} you mean before I can go on, sorry.")
            return say(f"I see several: {', '.join(every)}. Which {label} do you mean?")
    if who is not None and param in who:
        return who[param]
    if who is not None:
        mine = listed(c, param, who)
        if isinstance(mine, dict):
            return mine
        if mine:
            if c.asked(f"which {label}"):
                return say(f"I need to know which {label} you mean before I can go on, sorry.")
            return Ask(f"Which {label} do you mean: {' or '.join(mine)}?")
    if who is None and param == tool.id_param:
        return find_by_email(c, tool, label)
    if c.asked(f"{label} number"):
        # "It's PUNERT.": the answer to the question, whatever its shape.
        m = re.match(r"\s*(?:it's|it is|that's|sure,? it's)\s+(#?[A-Za-z0-9][\w-]*)", c.last_user, re.IGNORECASE)
        if m and c.agent_texts and f"{label} number" in c.agent_texts[-1].lower():
            return normalise_id(m.group(1), c.pattern_for(param)[1])
        return say(f"Without the {label} number I can't go on, sorry.")
    return Ask(f"Could you give me the {label} number?")


def getter(c, tool, param):
    """The read tool that fetches one record of a parameter's kind
    (`get_account` for `from_account_id`): the tool itself when it reads one."""
    kind = entity(param)
    # `get_account`, `get_order_details`: the kind in the name; one that
    # ends with it first.
    readers = [t for t in c.tools if t.reads and len(t.id_params) == 1
               and entity(t.id_params[0]) == kind and any(kind in w for w in t.name_words[1:])]
    readers.sort(key=lambda t: kind not in t.name_words[-1])
    if tool in readers:
        return tool
    return readers[0] if readers else None


def lookup_param(lookup, param):
    return lookup.id_params[0]


def listed(c, param, who):
    """The person's ids of a parameter's kind, from a read tool that lists
    them by the person's own id (`list_accounts` by `customer_id`); None
    when no tool does; a call to make first."""
    if who is None:
        return None
    mine = profile_ids(who, param)
    if mine is not None:
        return mine
    key = param if param.endswith("_id") else None
    kind = entity(param)
    for t in c.tools:
        if not (t.reads and len(t.id_params) == 1 and t.id_params[0] in who):
            continue
        if kind not in " ".join(t.name_words[1:]):
            continue
        args = {t.id_params[0]: who[t.id_params[0]]}
        done = c.last_call(t.name, args)
        if done is None:
            return call(t.name, args)
        result = done[2].get("result") if done[2].get("ok") else None
        if isinstance(result, list):
            names = [k for r in result if isinstance(r, dict) for k in r if entity(k) == kind and k.endswith("_id")]
            field = names[0] if names else key
            return [str(r.get(field)) for r in result if isinstance(r, dict) and r.get(field) is not None]
    return None


def profile_ids(who, param):
    """The ids of a parameter's kind the person's profile lists (`orders`:
    a list of ids or of records; `payment_methods`: records by id); None
    when it lists none."""
    kind = entity(param)
    for field, value in who.items():
        if field.endswith("_id") or field == "id":
            continue
        noun = field[:-1] if field.endswith("s") else field
        if not (noun == kind or noun.startswith(kind + "_")):
            continue
        if isinstance(value, dict):
            return [str(k) for k in value]
        if isinstance(value, list):
            ids = []
            for v in value:
                if isinstance(v, dict):
                    v = v.get(f"{kind}_id", v.get("id"))
                if isinstance(v, (str, int)):
                    ids.append(str(v))
            return ids
    return None


def identified(c, auths):
    """The person's own record from an identifying tool (the first whose
    every parameter the person gave), with their profile where a read shows
    it, or a reply asking for what the tools need."""
    ready = []
    for t in auths:
        args = {p: c.identity_value(p) for p in t.required}
        if all(args.values()):
            ready.append((t, args))
    if not ready:
        for i, t in enumerate(auths):
            question = identity_question(t, i == 0)
            if not c.asked(question.lower()):
                return say(question)
        return say("I can't identify you without those details, so I can't go on, sorry.")
    auth, args = ready[0]
    done = c.last_call(auth.name, args)
    if done is None:
        return call(auth.name, args)
    if not done[2].get("ok"):
        kind = (done[2].get("error") or {}).get("kind", "")
        if kind in TRANSIENT:
            return retry_or_report(c, auth.name, args, "look you up")
        given = " and ".join(str(v) for v in args.values())
        return say(f"I couldn't find you by {given}, so I can't verify this is your account.")
    result = done[2].get("result")
    if isinstance(result, dict):
        return result
    if not isinstance(result, (str, int)):
        return {}
    # A bare id (`find_user_id_by_email` -> "sara_doe_496"): the id the
    # tool's name says it finds, and the profile a read of it shows.
    finds = auth.name_words[1:auth.name_words.index("by")] if "by" in auth.name_words else auth.name_words[1:2]
    key = "_".join(finds) if finds and finds[-1] == "id" else "_".join(finds + ["id"])
    who = {key: result}
    profile = next((t for t in c.tools if t.reads and t.id_params == [key] and len(t.required) == 1
                    and any(w in OWNER_WORDS for w in t.name_words[1:])), None)
    if profile is None:
        return who
    done = c.last_call(profile.name, who)
    if done is None:
        return call(profile.name, dict(who))
    found = done[2].get("result") if done[2].get("ok") else None
    return dict(found, **who) if isinstance(found, dict) else who


def with_record_question(c, tool, reply):
    """The first question for who the person is, with the question for the
    record the tool needs when their words name none and no read lists
    their records once they are found: one message, so the person answers
    both at once."""
    text = reply.get("content") or ""
    param = tool.id_param
    if c.agent_texts or not text.startswith("Before I look at anything") or param is None \
            or entity(param) in OWNER_WORDS or c.ids_for(param, c.user_text):
        return reply
    kind = entity(param)
    # A read by the person's own id that lists that kind, or reads their
    # profile (which may list it: `get_user_details`).
    lists = any(t.reads and len(t.id_params) == 1 and entity(t.id_params[0]) in OWNER_WORDS
                and (kind in " ".join(t.name_words[1:]) or any(w in OWNER_WORDS for w in t.name_words[1:]))
                for t in c.tools)
    if lists:
        return reply
    return say(f"{text} Could you give me the {label_of(param)} number?")


def identity_question(tool, first):
    """What to ask for an identifying tool's parameters, one question each,
    each named as its description names it ("The patient's date of birth"
    -> date of birth)."""
    if "email" in tool.params:
        return "Before I look at anything: what email address is on your profile?"
    labels = [identity_label(tool, p) for p in tool.required]
    opening = "Before I look at anything: " if first else "To find your profile instead: "
    return opening + " ".join(f"What is your {label}?" for label in labels)


def identity_label(tool, param):
    """How to ask for one identity parameter: the noun its description
    starts with, owner and article left out ("The patient's full name." ->
    full name; "The first name of the customer" -> first name), else its
    name in words."""
    described = re.split(r"[,.(;:]| such as| of the\b", str((tool.params.get(param) or {}).get("description") or ""))[0]
    noun = [w for w in described.lower().split() if w not in ("the", "a", "an", "your", "their")
            and not w.endswith("'s")]
    if 1 <= len(noun) <= 3 and all(w.isalpha() for w in noun):
        return " ".join(noun)
    return param.replace("_", " ") + (" code" if param == "zip" else "")


def precondition_ok(tool, record):
    allowed = allowed_statuses(tool)
    status = str(record.get("status") or "").lower()
    return not allowed or not status or status in allowed


def lookup_failed(c, lookup, args, done, thing, target):
    kind = (done[2].get("error") or {}).get("kind", "")
    if kind == "not_found":
        if c.asked("double-check"):
            return say(f"I still can't find {thing} {target}, so I can't go on. "
                       "Please check the number and come back.")
        return say(f"I couldn't find {thing} {target}. Could you double-check the {thing} number?")
    if kind == "refused":
        return say(f"I couldn't look up {thing} {target}: {done[2]['error'].get('message')}.")
    return retry_or_report(c, lookup.name, args, f"look up {thing} {target}")


def find_by_email(c, tool, thing):
    """The person's record found by their email, or a reply asking for what is missing."""
    finder = next((t for t in c.tools if t.reads and t.id_param is None and "email" in t.params), None)
    email = EMAIL.search(c.user_text)
    if finder is not None and email is None and c.asked(f"{thing} number") \
            and not c.asked("look it up by the email"):
        # They do not know the number: find it by their email instead.
        return say(f"No problem, I can look it up by the email address on your account. "
                   "What email address is on your account?")
    if finder is None or email is None:
        if c.asked(f"{thing} number"):
            return say(f"Without the {thing} number I can't look into this, sorry.")
        return say(f"Could you give me the {thing} number?")
    args = {"email": email.group(0)}
    done = c.last_call(finder.name, args)
    if done is None:
        return call(finder.name, args)
    if not done[2].get("ok"):
        return retry_or_report(c, finder.name, args, f"look up the {thing}s of {email.group(0)}")
    records = done[2].get("result") or []
    ids = [r.get(tool.id_param) for r in records if isinstance(r, dict) and r.get(tool.id_param)]
    if len(ids) == 1:
        return ids[0]
    if not ids:
        return say(f"I couldn't find any {thing}s for {email.group(0)}. Could you give me the {thing} number?")
    return say(f"I see several: {', '.join(ids)}. Which {thing} number do you mean?")


BOUND = re.compile(r"\b(?:more than|over|above|exceeding|greater than)\s+\$?(\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)


def past_bound(c, tool, arguments):
    """The hand-off tool a policy sentence names for this tool's action when a
    number argument is past the sentence's bound, else None."""
    for sentence in policy_sentences(c.system):
        bound = BOUND.search(sentence)
        words = re.findall(r"[a-z]+", sentence.lower())
        if bound is None or tool.verb not in words:
            continue
        handoff = next((t for t in c.tools if t is not tool and t.recipient and t.name in sentence), None)
        if handoff is None:
            continue
        limit = float(bound.group(1).replace(",", ""))
        for value in arguments.values():
            try:
                number = float(str(value).replace(",", "").lstrip("$"))
            except ValueError:
                continue
            if number > limit:
                return handoff
    return None


def hand_off(c, tool, handoff, what):
    """Hands the person on with `handoff` and says so."""
    done = c.last_call(handoff.name)
    if done is None:
        summary = f"The person asks to {what}, which is past what the policy lets me do myself."
        arguments = {}
        for param in handoff.required:
            value = c.value_for(param, handoff) if param not in FREE_TEXT else None
            arguments[param] = value if value is not None else summary
        return call(handoff.name, arguments)
    article = "an" if handoff.recipient[:1] in "aeiou" else "a"
    if done[2].get("ok"):
        return say(f"That is more than I may {tool.verb} myself, so I have passed you to {article} "
                   f"{handoff.recipient}, who will take it from here.")
    return retry_or_report(c, handoff.name, done[1], f"pass you to {article} {handoff.recipient}")


def act_without_id(c, tool, thing):
    arguments = {}
    for param in tool.required:
        value = (c.identity_value(param) if param in IDENTITY_PARAMS else None) or c.value_for(param, tool)
        if value is None and param in FREE_TEXT:
            value = free_text(c, param)
        if value is None:
            label = param.replace("_", " ")
            if c.asked(f"what {label}") or c.asked(f"your {label}"):
                return say(f"Without the {label} I can't go on, sorry.")
            return say(f"What is your {label}?" if "email" in param else f"What {label} would you like?")
        arguments[param] = value
    done = c.last_call(tool.name, arguments)
    if done is None:
        return call(tool.name, arguments)
    if not done[2].get("ok"):
        return retry_or_report(c, tool.name, arguments, f"{tool.verb.replace('_', ' ')} that")
    result = done[2].get("result")
    if isinstance(result, list):
        if not result:
            return say(f"I found no {thing}s.")
        lines = []
        for r in result:
            if isinstance(r, dict):
                rid = next((v for k, v in r.items() if k == "id" or k.endswith("_id")), "?")
                status = r.get("status")
                lines.append(f"{rid} ({status})" if status else str(rid))
        return say(f"I found these: {', '.join(lines)}.")
    if isinstance(result, dict):
        return say(describe(result, thing, "").replace(" :", ":"))
    return say(f"Done: {tool.name.replace('_', ' ')} succeeded.")


serve(respond)
