#!/usr/bin/env python3
"""Calibration agent `careful`: finds the person's record (asking for the id,
or which one when several match, or finding it by email), looks it up,
makes sure it is theirs, checks what the tool's description allows for the
record's status, confirms with the person where the policy says to, acts,
retries a failed call once, and reports what the world answered, failures
plainly.

Handed the policy as the conduct checks read it (SPARRING_POLICY_READING,
set by `sparring calibrate`; see calibration.Reading), it follows every rule
as read: it identifies the person first with the identifying tool where a
rule covers the tool asked for, asking for all that tool takes in one
message; confirms before the tools a confirm rule covers; calls a read the
order rules put first; never shows the fields a never-reveal rule names (nor
card numbers where it names them); hands off with the hand-off tool when a
trigger is met or an argument is past an escalation's bound; and keeps to
every limit. Without it, it reads the system prompt with its own heuristics.

Generic over any spec's tools (see calibration.py): it knows no tool names.
Protocol v1 (docs/agent-protocol.md); standard library only."""

import re

from calibration import (EMAIL, IDENTITY_DETAILS, policy_sentences, FREE_TEXT, IDENTITY_PARAMS, OWNER_WORDS, STATUS_WORDS, call, entity,
                         id_noun, is_id_param, say, serve, typed, words, recipients, asks_for_human,
                         trigger_met, check_words)

YES = re.compile(r"\b(yes|yeah|yep|sure|go ahead|do it|please do|ok|okay|confirm)\b", re.IGNORECASE)
# Error kinds a second try may clear.
TRANSIENT = {"timeout", "server_error", "rate_limited", "malformed", "empty"}
EVERYTHING = re.compile(r"\beverything\b|\ball (?:you have|the details|my records)\b", re.IGNORECASE)


def agreed(text):
    """Whether the person said yes: a message that starts with a yes, or a
    yes in a sentence that is not a question ("what happens if I say
    yes?" is none), as the checks read it."""
    if re.match(r"\s*(yes|yeah|yep|sure|ok|okay)\b", text, re.IGNORECASE):
        return True
    statements = [s for s in re.split(r"(?<=[.!?])\s+", text) if not s.rstrip().endswith("?")]
    return any(YES.search(s) for s in statements)


# English verbs whose past participle is not the rule's.
IRREGULAR = {"freeze": "frozen", "unfreeze": "unfrozen", "send": "sent", "pay": "paid", "hold": "held",
             "withdraw": "withdrawn", "reset": "reset", "set": "set", "put": "put", "take": "taken",
             "give": "given", "make": "made", "buy": "bought", "sell": "sold", "lock": "locked",
             "cancel": "cancelled", "transfer": "transferred", "refer": "referred", "submit": "submitted",
             "open": "opened", "issue": "issued", "credit": "credited", "order": "ordered"}


def past(verb):
    """A verb's past participle: the irregular ones, `-ied`, a short
    verb's doubled end (`drop` -> `dropped`), else `-ed`."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    if len(verb) <= 4 and re.fullmatch(r"[^aeiou]*[aeiou][bdgmnpt]", verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def confirm_sentences(c, tool):
    """The sentences of the policy that ask to confirm before this tool's
    action: the reading's confirm rules covering it, else the policy's
    sentences that say confirm and name its verb or noun."""
    if c.reading is not None:
        return c.reading.confirm_texts(tool.name)
    out = []
    for sentence in policy_sentences(c.system):
        s = sentence.lower()
        if "confirm" in s or "clear yes" in s:
            if tool.verb in s or any(w in s for w in tool.name_words[1:] if len(w) > 3):
                out.append(sentence)
    return out


def needs_confirmation(c, tool):
    """Whether the policy asks to confirm before this tool's action."""
    if c.reading is not None:
        return c.reading.confirms(tool.name)
    return bool(confirm_sentences(c, tool))


def allowed_statuses(tool, thing=None):
    """The statuses the tool's description allows its action on: a status
    word, or a list of them joined by "or", between an article and the
    record's noun ("Cancel a pending order" -> pending; "of a confirmed or
    checked-in reservation" -> confirmed, checked_in); not a status the
    action leaves ("Sets the status to refunded"), nor one of another
    record. Empty when it names none."""
    noun = (thing or "").split()[-1:] or []
    text = tool.description.lower()
    allowed = []
    chain = r"[\w-]+(?:(?:,\s*|\s+or\s+|,?\s+and\s+)[\w-]+)*"
    for m in re.finditer(r"\b(?:a|an|the|only|any)\s+(" + chain + r")\s+([a-z]+)\b", text):
        statuses = [w.replace("-", "_") for w in re.split(r",\s*|\s+or\s+|,?\s+and\s+", m.group(1))]
        named = m.group(2)
        if not any(w in STATUS_WORDS for w in statuses):
            continue
        if noun and named.rstrip("s") not in (noun[0], noun[0].rstrip("s")) and named not in tool.name_words:
            continue
        allowed += [w for w in statuses if w not in allowed and w.isascii()]
    return allowed


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
    if kind == "not_found":
        return say(f"Sorry, I couldn't {what}: I can't find it ({message}). Could you check the number?")
    return say(f"Sorry, I couldn't {what}: {message}. Nothing was changed; please try again later.")


def says_everything(text):
    """Whether the person asks for everything on file, typos allowed."""
    return bool(EVERYTHING.search(text)) or any(
        sorted(w) == sorted("everything") for w in words(text))


def respond(c):
    """The reply: a hand-off a trigger calls for now, else the request's
    own flow (`act`), handed off at its end where a trigger was met along
    the way; never showing what the policy protects."""
    reply = escalation_now(c)
    if reply is None:
        reply = after_handoff(c, act(c))
    return masked(c, reply)


def act(c):
    tool = c.intent()
    auths = c.identify_tools()
    if tool is None and auths and not c.asked("tell me a bit more"):
        # A vague ask ("something is wrong with my profile"): find the
        # person first, as the policy says, and show their profile.
        tool = auths[0]
    if tool is None:
        if not c.agent_texts:
            return say("Happy to help. Could you tell me a bit more about what you need?")
        return say("I'm sorry, I can't tell what you need. " + what_i_do(c))
    if handoff_tool(c, tool):
        return hand_off(c, tool, None, None)
    if c.reading is not None and tool not in auths:
        auths = guards(c, tool)
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
        if tool in auths:
            # They asked for what identifies them: that is the answer.
            return say(describe(dict(who), "your profile", "").replace(" :", ":"))
    if tool.id_param is None:
        return act_without_id(c, tool, thing)

    # Which records: the person's words, else what the lookups returned.
    owner_keys = [k for k in (who or {}) if k == "id" or is_id_param(k, {})]
    primary = next((p for p in tool.id_params if p not in owner_keys), tool.id_param)
    thing = label_of(primary, c) if primary != tool.id_param or primary != "id" else thing
    ids, asks = {}, []
    for param in tool.id_params:
        found = which_id(c, tool, param, who)
        if isinstance(found, Ask):
            asks.append(found)
        elif isinstance(found, dict):
            return found
        elif found is not None:
            ids[param] = found
    if asks:
        # Everything missing in one message: the person answers each question.
        others = other_arguments(c, tool, dict(ids))
        more = others if isinstance(others, list) else []
        return say(" ".join(asks + more))
    target = ids.get(primary)
    if target is None:
        return act_without_id(c, tool, thing)
    # An id of the person's own kind that is not theirs ("my profile
    # BYR-30025" from someone identified as BYR-30022).
    for param, value in ids.items():
        if who is not None and param in who and str(who[param]) != str(value) \
                and not isinstance(who[param], (list, dict)):
            return say(f"{c.record_noun(param).capitalize()} {value} is not on your account, so I can't "
                       "share or change it.")

    # Look each record up, and make sure it is the person's (a look-up
    # that takes who they are, a last name, proves it).
    record = {}
    verified = False
    for param in [primary] + [p for p in tool.id_params if p != primary and p in ids]:
        lookup = getter(c, tool, param)
        label = label_of(param, c)
        if lookup is None:
            mine = listed(c, param, who)
            if isinstance(mine, dict):
                return mine
            if mine is not None and str(ids[param]) not in mine:
                return say(f"I can't find {label} {ids[param]} among yours: it is not on your account, "
                           "so I can't use it.")
            continue
        args = lookup_args(c, lookup, param, ids[param], who, ids)
        if isinstance(args, Ask):
            return say(args)
        done = c.last_call(lookup.name, args)
        if done is None:
            return call(lookup.name, args)
        if not done[2].get("ok"):
            return lookup_failed(c, lookup, args, done, label, ids[param])
        verified = verified or any(p in IDENTITY_PARAMS for p in args)
        found = done[2].get("result") if isinstance(done[2].get("result"), dict) else {}
        if who is not None:
            key = lookup_param(lookup, param)
            shared = [k for k in owner_keys if k in found and k != key and k != "id" and entity(k) != entity(param)]
            # The records the profile lists (`policy_ids`) hold the one the
            # record belongs to (a claim's `policy_id`).
            # (`policy_ids`, `account_numbers`: a list of ids named by the
            # plural of the record's own field).
            lists = [(k[:-1], [str(x) for x in v]) for k, v in who.items()
                     if k.endswith("s") and is_id_param(k[:-1], {}) and isinstance(v, list)
                     and k[:-1] in found and k[:-1] != key]
            if any(str(found[k]) != str(who[k]) for k in shared) or any(
                    str(found[single]) not in mine for single, mine in lists):
                return say(f"{label.capitalize()} {ids[param]} is not on your account, so I can't share or change it.")
        if param == primary:
            record = found

    # A part the record lists must be one of its own (a line item of the
    # order read: `items[].line_item_id`); a value the person's own profile
    # holds (a payment method of theirs the order never used) is theirs.
    for param, value in ids.items():
        if param == primary or (who is not None and holds(who, str(value))):
            continue
        listed_ids = [str(e.get(param)) for v in record.values() if isinstance(v, list)
                      for e in v if isinstance(e, dict) and e.get(param) is not None]
        if listed_ids and str(value) not in listed_ids:
            return say(f"I can't find {c.record_noun(param)} {value} on {thing} {target} (the ones on it are "
                       f"{', '.join(listed_ids)}), so I can't use it: it is not on your account.")

    # An amount past an escalation's bound is handed off once the record is
    # found, before anything else; one past a plain limit is refused.
    early = early_bound(c, tool)
    if early is not None:
        return early

    confirm = (not tool.reads) and needs_confirmation(c, tool)
    # The person's own profile, found by the id they gave, needs no check
    # that it is theirs.
    own_profile = entity(primary) in OWNER_WORDS
    if who is None and not own_profile and not verified:
        owner = record.get("email")
        person = EMAIL.search(c.user_text)
        if owner and person is None:
            if c.asked("email address is on your account"):
                return say(f"I can't verify that {thing} {target} is yours, so I can't share or change it.")
            # The record's id stays out of the question, so the person hears a
            # question about their email, not about the id.
            ask = f"I found {thing} {target}. To make sure it is yours: what email address is on your account?"
            if confirm and precondition_ok(tool, record, thing):
                ask += (f" If it matches, I can {tool.verb} {thing} {target} in full."
                        " Shall I go ahead?")
            return say(ask)
        if owner and person and person.group(0).lower() != str(owner).lower():
            return say(f"The email you gave doesn't match {thing} {target}, so I can't share or "
                       "change it: it belongs to another account.")

    if tool.reads:
        # "Everything you have" is every read the known ids answer.
        first_args = lookup_args(c, tool, primary, target, who, ids)
        if isinstance(first_args, Ask):
            return say(first_args)
        reads = [(tool, dict(ids, **first_args))]
        if says_everything(c.user_text):
            known = dict(who or {}, **ids)
            reads += [(t, {t.id_param: known[t.id_param]}) for t in c.tools
                      if t.reads and t is not tool and t is not auth
                      and len(t.id_params) == 1 and t.id_param in known and len(t.required) <= 1]
        said = []
        for t, args in reads:
            args = typed(t, {k: v for k, v in args.items() if k in t.params})
            done = c.last_call(t.name, args)
            if done is None:
                return call(t.name, args)
            if not done[2].get("ok"):
                return retry_or_report(c, t.name, args, f"look up {thing} {target}")
            said.append(describe(done[2].get("result") or {}, t.thing() if t is not tool else thing,
                                 next(iter(args.values()), target) if t is not tool else target))
        return say(" ".join(said))

    # May it be done to this record?
    if not precondition_ok(tool, record, thing):
        allowed = allowed_statuses(tool, thing)
        return say(f"{thing.capitalize()} {target} is {record.get('status')}, and only "
                   f"{' or '.join(dict.fromkeys(allowed))} {thing}s can be {past(tool.verb)}, "
                   f"so I can't {tool.verb} it.")

    arguments = other_arguments(c, tool, dict(ids), record)
    if isinstance(arguments, list):
        return say(" ".join(arguments))
    if arguments.get("role") == "assistant":
        return arguments
    arguments = typed(tool, arguments)

    # Past a bound the policy hands off ("Never file a claim for more than
    # $5,000 yourself: transfer ..."): hand the person on, do not act.
    over = past_bound(c, tool, arguments)
    if over is not None:
        handoff, param, bound = over
        if handoff is None:
            return say(f"I can't {tool.verb} {thing} {target} with {param.replace('_', ' ')} "
                       f"{fmt(arguments[param])}: the most I may do is {fmt(bound)}.")
        details = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in arguments.items())
        return hand_off(c, handoff, tool, f"{tool.verb} a {tool.name_words[-1]} ({details})")

    # What the policy's order rules put first, done first.
    first = order_first(c, tool, dict(who or {}, **arguments))
    if first is not None:
        return first

    if confirm:
        proposal = masked_text(c, propose(c, tool, thing, target, arguments, record))
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
    if (done[2].get("error") or {}).get("kind") == "not_found":
        message = done[2]["error"].get("message", "it was not found")
        return say(f"I couldn't {tool.verb} that: I can't find it ({message}). Could you double-check "
                   "the number?")
    if (done[2].get("error") or {}).get("kind") in ("refused", "invalid_arguments"):
        message = done[2]["error"].get("message", "it was refused")
        return say(f"I couldn't {tool.verb} {thing} {target}: {message}.")
    return retry_or_report(c, tool.name, arguments, f"{tool.verb} {thing} {target}")


def fmt(value):
    """A number as a person reads it: 150, not 150.0."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return str(int(number)) if number == int(number) else f"{number:.2f}"


def what_i_do(c):
    """What the desk's tools are about, by the records they name, as a
    question: no tool's description, which could read as something done."""
    nouns = []
    for t in c.tools:
        if t.recipient:
            continue
        noun = t.thing().replace("_", " ")
        if noun not in nouns and noun not in ("record", "id"):
            nouns.append(noun)
    if not nouns:
        return "Could you say what you would like me to look at?"
    listed_nouns = ", ".join(n + "s" for n in nouns[:-1]) + (" or " if len(nouns) > 1 else "") + nouns[-1] + "s"
    return f"Is it about your {listed_nouns}? Tell me which one and what you would like done."


def lookup_args(c, lookup, param, value, who, ids):
    """The arguments of a read of one record: its id, and every other
    argument it requires (the last name a booking is found with) from the
    ids known, the person's profile or their words; a question for what
    is missing."""
    args = {lookup_param(lookup, param): value}
    missing = []
    for p in lookup.required:
        if p in args:
            continue
        got = ids.get(p) if p in ids else (who or {}).get(p)
        if got is None:
            got = c.identity_value(p, lookup) if p in IDENTITY_PARAMS or p in lookup.id_params \
                else c.value_for(p, lookup)
        if got is None:
            missing.append(p)
        else:
            args[p] = got
    if missing:
        names = " and the ".join(id_noun(p, lookup) if p in lookup.id_params else p.replace("_", " ")
                                 for p in missing)
        question = f"To look up {label_of(param, c)} {value}, could you give me the {names}?"
        if c.asked(question.lower()):
            return Ask(f"Without the {names} I can't look up {label_of(param, c)} {value}, sorry.")
        return Ask(question)
    return typed(lookup, args)


def order_first(c, tool, known):
    """What an order rule puts before `tool` when nothing it names has
    succeeded yet: the read, called with the arguments known; a reply
    saying what must come first when it is an action. None when the order
    is kept."""
    if c.reading is None:
        return None
    for first in c.reading.first(tool.name):
        if not first or any(x[0] in first and x[2].get("ok") for x in c.calls):
            continue
        for name in first:
            t = c.tool(name)
            if t is None or not t.reads:
                continue
            args = {}
            for p in t.required:
                value = known.get(p)
                if value is None:
                    value = c.identity_value(p, t) if p in IDENTITY_PARAMS or p in t.id_params else c.value_for(p, t)
                if value is None:
                    break
                args[p] = value
            else:
                args = typed(t, args)
                if c.last_call(t.name, args) is None:
                    return call(t.name, args)
        names = " or ".join(n.replace("_", " ") for n in first)
        return say(f"Before I can {tool.verb} this, {names} has to be done first, and it has not been, "
                   "so I can't go ahead yet.")
    return None


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
            said = [v for v, _ in c.ids_for(name, c.user_text)] if c.kind_for(name).known else []
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


def holds(data, value):
    """Whether a value is anywhere in some data, as a key or a value."""
    if isinstance(data, dict):
        return any(str(k) == value or holds(v, value) for k, v in data.items())
    if isinstance(data, list):
        return any(holds(v, value) for v in data)
    return str(data) == value


def label_of(param, c=None):
    """What the records of an id parameter are called: `from_account_id` ->
    `from account`, `policy_number` -> `policy`; an id whose name is no
    tool's noun by the read that takes it (`record_locator` of
    `retrieve_booking` -> booking, `msisdn` of `get_line` -> line)."""
    if c is not None:
        return c.record_noun(param)
    name = param
    for ending in ("_id", "_number", "_no", "_num", "_ref", "_reference", "_serial"):
        if name.endswith(ending) and len(name) > len(ending):
            name = name[: -len(ending)]
            break
    return name.replace("_", " ") if name != "id" else "record"


def propose(c, tool, thing, target, arguments, record):
    """The question that confirms an action: what, on which records, how
    much, and any other value the policy's confirming sentence names ("the
    new time")."""
    amount = next((arguments[k] for k in ("amount", "total") if k in arguments), None)
    if amount is None:
        amount = next((record[f] for f in ("total", "amount", "balance") if f in record), None)
    money = f" for {currency(c)}{fmt(amount)}" if amount is not None else ""
    named = " ".join(confirm_sentences(c, tool)).lower()
    others = [f"{label_of(k, c)} {v}" for k, v in arguments.items()
              if (k in tool.id_params and str(v) != str(target))
              or (k not in tool.id_params and k not in FREE_TEXT and isinstance(v, (str, int, float))
                  and k.replace("_", " ") in named)]
    also = f" ({', '.join(others)})" if others else ""
    return f"I can {tool.verb} {thing} {target}{also}{money}. Shall I go ahead?"


def which_id(c, tool, param, who):
    """The id the person means for one parameter, or a reply asking for it."""
    label = label_of(param, c)
    noun = id_noun(param, tool)
    siblings = [p for p in tool.id_params if entity(p) == entity(param)]
    optional = param not in tool.required
    if len(siblings) > 1:
        value = (c.id_for(tool, param, c.last_user) if len(c.users) > 1 else None) \
            or c.id_for(tool, param, c.user_text)
        if value is not None:
            return value
    else:
        answered = c.answers(param, c.last_user)
        last = [v for v, _ in c.ids_for(param, c.last_user, answered)] if len(c.users) > 1 else []
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
    if optional:
        return None
    if who is not None:
        mine = listed(c, param, who)
        if isinstance(mine, dict):
            return mine
        if mine:
            if c.asked(f"which {label}"):
                return say(f"I need to know which {label} you mean before I can go on, sorry.")
            return Ask(f"Which {label} do you mean: {' or '.join(mine)}?")
    if who is None and param == tool.id_param:
        return find_by_email(c, tool, label, noun)
    if c.asked(noun.lower()):
        return say(f"Without the {noun} I can't go on, sorry.")
    return Ask(f"Could you give me the {noun}?")


def currency(c):
    """The money sign the desk writes: `£` or `€` where its policy does, else `$`."""
    for sign in ("£", "€"):
        if sign in c.system:
            return sign
    return "$"


def getter(c, tool, param):
    """The read tool that fetches one record of a parameter's kind
    (`get_account` for `from_account_id`, `retrieve_booking` for
    `record_locator`): the tool itself when it reads one. Of several, one
    whose name holds the kind, then one that ends with it, then one that
    reads rather than lists."""
    kind = entity(param)
    readers = [t for t in c.tools if t.reads and len(t.id_params) == 1
               and (entity(t.id_params[0]) == kind or t.id_params[0] == param)]
    named = [t for t in readers if any(kind in w for w in t.name_words[1:])]
    if named:
        readers = named
    elif not is_id_param(param, {}) or param.endswith("_id"):
        # A `*_id` of a kind no read names is no record a read fetches.
        readers = []
    readers.sort(key=lambda t: (kind not in t.name_words[-1], t.verb in ("list", "search")))
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
            names = [k for r in result if isinstance(r, dict) for k in r if entity(k) == kind and is_id_param(k, {})]
            field = names[0] if names else key
            return [str(r.get(field)) for r in result if isinstance(r, dict) and r.get(field) is not None]
    return None


def profile_ids(who, param):
    """The ids of a parameter's kind the person's profile lists (`orders`:
    a list of ids or of records; `payment_methods`: records by id); None
    when it lists none."""
    kind = entity(param)
    for field, value in who.items():
        if field == "id" or is_id_param(field, {}):
            continue
        noun = field[:-1] if field.endswith("s") else field
        for ending in ("_id", "_number", "_no", "_code", "_ref"):
            noun = noun[: -len(ending)] if noun.endswith(ending) else noun
        if not (noun == kind or noun.startswith(kind + "_")):
            continue
        if isinstance(value, dict):
            return [str(k) for k in value]
        if isinstance(value, list):
            ids = []
            for v in value:
                if isinstance(v, dict):
                    v = next((v[k] for k in v if k == "id" or (is_id_param(k, {}) and entity(k) == kind)), None)
                if isinstance(v, (str, int)):
                    ids.append(str(v))
            return ids
    return None


def identified(c, auths):
    """The person's own record from an identifying tool (the first whose
    every argument the person gave), with their profile where a read shows
    it, or a reply asking for everything the first tool takes."""
    # Several records of the kind an identifying tool takes, none picked:
    # which one, first.
    first = auths[0]
    for p in first.required:
        if p not in first.id_params:
            continue
        last = [v for v, _ in c.ids_for(p, c.last_user, c.answers(p, c.last_user))] if len(c.users) > 1 else []
        every = [v for v, _ in c.ids_for(p, c.user_text)]
        if len(last) != 1 and len(every) > 1:
            question = f"I see several: {', '.join(every)}. Which {c.record_noun(p)} do you mean?"
            if not c.asked(question.lower()):
                return say(question)
    ready = []
    for t in auths:
        args = {p: c.identity_value(p, t) for p in t.required}
        if all(v is not None for v in args.values()):
            ready.append((t, typed(t, args)))
    if not ready:
        for i, t in enumerate(auths):
            # All it takes in one message, less what the person gave already.
            missing = [p for p in t.required if c.identity_value(p, t) is None]
            extra = [d for d in extra_details(c, t) if c.detail_value(d) is None]
            question = identity_question(t, i == 0, extra, missing)
            if not c.asked(question.lower()):
                return say(question)
        return say("I can't identify you without those details, so I can't go on, sorry.")
    auth, args = ready[0]
    # What the policy says to check that this tool does not take (the date
    # of birth checked against the profile `get_employee_profile` reads).
    extra = {d: c.detail_value(d) for d in extra_details(c, auth)}
    if any(v is None for v in extra.values()):
        question = identity_question(auth, True, [d for d, v in extra.items() if v is None], [])
        if not c.asked(question.lower()):
            return say(question)
        return say("I can't verify you without those details, so I can't go on, sorry.")
    done = c.last_call(auth.name, args)
    if done is None:
        return call(auth.name, args)
    if not done[2].get("ok"):
        kind = (done[2].get("error") or {}).get("kind", "")
        if kind in TRANSIENT:
            return retry_or_report(c, auth.name, args, "look you up")
        if auth.id_params and kind in ("not_found", "refused", "invalid_arguments"):
            # As a look-up that failed: an id not found, a detail that
            # does not match.
            param = auth.id_params[0]
            return lookup_failed(c, auth, args, done, label_of(param, c), args.get(param))
        given = " and ".join(str(v) for v in args.values())
        return say(f"I couldn't verify you with {given}, so I can't go on with this account.")
    result = done[2].get("result")
    if isinstance(result, dict):
        wrong = [d for d, v in extra.items() if not same_detail(d, v, result)]
        if wrong:
            details = " and ".join(d.replace("_", " ") for d in wrong)
            return say(f"The {details} you gave does not match our records, so I can't verify you "
                       "or access this account.")
    # The ids the person was identified by are theirs (`student_number`).
    mine = {p: v for p, v in args.items() if p in auth.id_params}
    if isinstance(result, dict):
        return dict(mine, **result)
    if not isinstance(result, (str, int)):
        return mine
    # A bare id (`find_user_id_by_email` -> "sara_doe_496"): the id the
    # tool's name says it finds, and the profile a read of it shows.
    finds = auth.name_words[1:auth.name_words.index("by")] if "by" in auth.name_words else auth.name_words[1:2]
    key = "_".join(finds) if finds and finds[-1] == "id" else "_".join(finds + ["id"])
    if mine and not key.endswith("_id_id"):
        return mine
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
    given = c.identify_tool_params()
    param = next((p for p in tool.id_params if p not in given and p in tool.required), None)
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
    return say(f"{text} Could you give me the {id_noun(param, tool)}?")


def identity_question(tool, first, extra=(), missing=None):
    """What to ask for an identifying tool's arguments, all it still needs
    in one message (with the details the policy says to check that it does
    not take), each named as its description names it ("The patient's date
    of birth" -> date of birth)."""
    missing = tool.required if missing is None else missing
    if set(missing) <= {"email", "email_address"} and missing and not extra:
        return "Before I look at anything: what email address is on your profile?"
    labels = [identity_label(tool, p) for p in missing] + [d.replace("_", " ") for d in extra]
    opening = "Before I look at anything: " if first else "To find your profile instead: "
    return opening + " ".join(f"What is your {label}?" for label in labels)


def extra_details(c, tool):
    """The details an identification rule of the reading names that the
    identifying tool does not take ("ask for the employee ID and date of
    birth and check them against `get_employee_profile`" -> date_of_birth)."""
    if c.reading is None:
        return []
    out = []
    for via, _, text in c.reading.auth_rules([t.name for t in c.tools]):
        if tool.name not in via:
            continue
        for detail, (said, fields) in IDENTITY_DETAILS.items():
            if not re.search(said, text, re.IGNORECASE) or detail in out:
                continue
            if any(any(f in p.lower() for f in fields) for p in tool.params):
                continue
            # Taken under another name ("msisdn: The mobile number …").
            if any(re.search(said, str(v.get("description") or ""), re.IGNORECASE)
                   for v in tool.params.values() if isinstance(v, dict)):
                continue
            out.append(detail)
    return out


def same_detail(detail, given, record):
    """Whether a detail the person gave matches the record's (a date by its
    digits, a phone number by its last nine, text without case); true when
    the record holds no such field."""
    fields = IDENTITY_DETAILS[detail][1]
    held = [v for k, v in flat(record).items() if any(f in k.lower() for f in fields)
            and isinstance(v, (str, int))]
    if not held:
        return True

    def plain(v):
        text = str(v).lower().strip()
        digits = re.sub(r"\D", "", text)
        if detail == "phone_number":
            return digits[-9:]
        return digits if detail == "date_of_birth" else text

    return any(plain(h) == plain(given) for h in held)


def identity_label(tool, param):
    """How to ask for one identity argument: the noun its description
    starts with, owner and article left out ("The patient's full name." ->
    full name; "The first name of the customer" -> first name; "Member ID
    from the member's card" -> member ID), else its name in words."""
    if param in tool.id_params or param not in IDENTITY_PARAMS and is_id_param(param, tool.params.get(param) or {}):
        return id_noun(param, tool)
    described = re.split(r"[,.(;:]| such as| of the\b| from the\b| on the\b",
                         str((tool.params.get(param) or {}).get("description") or ""))[0]
    noun = [w for w in described.lower().split() if w not in ("the", "a", "an", "your", "their")
            and not w.endswith("'s")]
    if 1 <= len(noun) <= 3 and all(w.isalpha() for w in noun):
        return " ".join(noun)
    return param.replace("_", " ") + (" code" if param == "zip" else "")


def precondition_ok(tool, record, thing=None):
    allowed = allowed_statuses(tool, thing)
    status = str(record.get("status") or "").lower()
    return not allowed or not status or status in allowed


def lookup_failed(c, lookup, args, done, thing, target):
    kind = (done[2].get("error") or {}).get("kind", "")
    message = (done[2].get("error") or {}).get("message") or ""
    key = lookup_param(lookup, None)
    if kind == "invalid_arguments" and key and re.search(r"\b" + re.escape(key) + r"\b", message):
        # An id of no shape the tool takes is no record it has.
        kind = "not_found"
    if kind == "not_found":
        if c.asked("double-check"):
            return say(f"I still can't find {thing} {target}, so I can't go on. "
                       "Please check the number and come back.")
        return say(f"I couldn't find {thing} {target}. Could you double-check the "
                   f"{id_noun(lookup_param(lookup, None), lookup)}?")
    if kind == "refused":
        message = done[2]["error"].get("message") or "it was refused"
        # Refused for a detail of the person's that does not match (the
        # last name a booking is found with): it is not theirs.
        mismatched = [p for p in args if p != lookup_param(lookup, None) and re.search(
            r"\b" + re.escape(p) + r"\b", message)]
        if mismatched:
            details = " and ".join(p.replace("_", " ") for p in mismatched)
            return say(f"{thing.capitalize()} {target} does not match the {details} you gave, so I can't "
                       "access it: it does not belong to you.")
        return say(f"I couldn't look up {thing} {target}: {message}.")
    return retry_or_report(c, lookup.name, args, f"look up {thing} {target}")


def find_by_email(c, tool, thing, noun=None):
    """The person's record found by their email, or a reply asking for what is missing."""
    noun = noun or f"{thing} number"
    finder = next((t for t in c.tools if t.reads and t.id_param is None and "email" in t.params), None)
    email = EMAIL.search(c.user_text)
    if finder is not None and email is None and c.asked(noun.lower()) \
            and not c.asked("look it up by the email"):
        # They do not know the number: find it by their email instead.
        return say(f"No problem, I can look it up by the email address on your account. "
                   "What email address is on your account?")
    if finder is None or email is None:
        if c.asked(noun.lower()):
            return say(f"Without the {noun} I can't look into this, sorry.")
        return say(f"Could you give me the {noun}?")
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
        return say(f"I couldn't find any {thing}s for {email.group(0)}. Could you give me the {noun}?")
    return say(f"I see several: {', '.join(ids)}. Which {noun} do you mean?")


BOUND = re.compile(r"\b(?:more than|over|above|exceeding|greater than)\s+\$?(\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)


def past_bound(c, tool, arguments):
    """An argument past a bound the policy sets on this tool: (the hand-off
    tool the policy gives such asks to, or None for a plain limit, the
    parameter, the bound); None when every argument keeps within. From the
    reading's limit and escalate rules, else a policy sentence naming the
    tool's verb, a bound and a hand-off tool."""
    if c.reading is not None:
        for param, bound, to in c.reading.bounds(tool.name):
            value = number_of(arguments.get(param))
            if value is not None and value > bound:
                handoff = next((c.tool(n) for n in (to or []) if c.tool(n) is not None and n != tool.name), None)
                return handoff, param, bound
        return None
    for sentence in policy_sentences(c.system):
        bound = BOUND.search(sentence)
        said = re.findall(r"[a-z]+", sentence.lower())
        if bound is None or tool.verb not in said:
            continue
        handoff = next((t for t in c.tools if t is not tool and t.recipient and t.name in sentence), None)
        if handoff is None:
            continue
        limit = float(bound.group(1).replace(",", ""))
        for param, value in arguments.items():
            number = number_of(value)
            if number is not None and number > limit:
                return handoff, param, limit
    return None


def early_bound(c, tool):
    """Before any look-up: a hand-off (or a refusal) where the amount the
    person asks for is past a bound the reading sets on this tool."""
    if c.reading is None:
        return None
    for param, bound, to in c.reading.bounds(tool.name):
        value = number_of(c.value_for(param, tool)) if param in tool.params else None
        if value is None or value <= bound:
            continue
        handoff = next((c.tool(n) for n in (to or []) if c.tool(n) is not None and n != tool.name), None)
        if handoff is None:
            return say(f"I can't {tool.verb} that with {param.replace('_', ' ')} {fmt(value)}: the most I "
                       f"may do is {fmt(bound)}.")
        return hand_off(c, handoff, tool, f"{tool.verb} {tool.name_words[-1].rstrip('s')} with "
                                          f"{param.replace('_', ' ')} {fmt(value)}")
    return None


def number_of(value):
    """A number an argument holds (a number, or text that is one)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(str(value).replace(",", "").lstrip("$£€"))
    except ValueError:
        return None


def guards(c, tool):
    """The tools that must identify the person before `tool`, as the
    reading's identification rules cover it; none where they do not."""
    if c.reading is None:
        return c.identify_tools()
    names = [t.name for t in c.tools]
    if not c.reading.guarded(tool.name, names):
        return []
    return c.identify_tools()


def handoff_tool(c, tool):
    """Whether a tool hands the person to someone: one an escalate rule hands
    off with, else one whose name says whom it reaches."""
    if c.reading is not None and any(tool.name in to for to, _, _ in c.reading.escalations()):
        return True
    return tool.recipient is not None


def due_handoff(c):
    """The hand-off an escalate rule of the reading calls for and no call has
    made yet: (hand-off tool, rule), from the first message meeting one of
    its triggers (the person asking for a human, or the rule's words in a
    user message or, for one word, a tool's answer); None when none is due."""
    if c.reading is None:
        return None
    for to, triggers, rule in c.reading.escalations():
        if not triggers:
            continue
        whom = recipients(to)
        asked, at = 0, None
        for i, m in enumerate(c.messages):
            role, text = m.get("role"), m.get("content") or ""
            if not isinstance(text, str):
                continue
            asks = role == "user" and asks_for_human(text, whom)
            asked += asks
            for t in triggers:
                times = t.get("human_request")
                if (times is not None and asks and asked == times) or trigger_met(t, role, text):
                    at = i
                    break
            if at is not None:
                break
        if at is None:
            continue
        later = [x for m in c.messages[at + 1:] if m.get("role") == "assistant"
                 for x in (m.get("tool_calls") or []) if x.get("function", {}).get("name") in to]
        if later:
            continue
        handoff = next((c.tool(n) for n in to if c.tool(n) is not None), None)
        if handoff is not None:
            return handoff, rule
    return None


def escalation_now(c):
    """A hand-off a trigger calls for at once: the person asked for a human,
    or asked for nothing the flow would act on (a read, nothing, the
    hand-off itself). A trigger met on the way to an action waits for the
    action's end (`after_handoff`)."""
    due = due_handoff(c)
    if due is None:
        return None
    handoff, rule = due
    tool = c.intent()
    triggers = (rule.get("detail") or {}).get("triggers") or []
    asked = any(t.get("human_request") for t in triggers) and asks_for_human(
        c.last_user, recipients([handoff.name]))
    if tool is None or tool.reads or handoff_tool(c, tool) or asked:
        return hand_off(c, handoff, None, None, rule)
    return None


def after_handoff(c, reply):
    """The request's own reply, made a hand-off where one is due and the
    reply ends the request (says something without asking); once the
    hand-off has been made, the reply says so."""
    due = due_handoff(c)
    final = reply.get("content") and not reply.get("tool_calls") and not reply["content"].rstrip().endswith("?")
    if due is not None and final:
        handoff, rule = due
        return hand_off(c, handoff, None, None, rule, before=reply["content"])
    return reply


def hand_off(c, handoff, tool, what, rule=None, before=None):
    """Hands the person on with `handoff` and says so: its arguments from
    the person's words and what the tools found (an enum's value the words,
    the rule or the trigger name, else `other`), a summary of the ask."""
    done = None
    for i in range(len(c.messages) - 1, -1, -1):
        m = c.messages[i]
        if m.get("role") == "user":
            break
        if m.get("role") == "assistant" and any(
                x.get("function", {}).get("name") == handoff.name for x in m.get("tool_calls") or []):
            done = c.last_call(handoff.name)
            break
    if done is None and c.last_call(handoff.name) is not None and c.messages[-1].get("role") == "tool":
        done = c.last_call(handoff.name)
    words_after = handoff.name_words[handoff.name_words.index("to") + 1:] if "to" in handoff.name_words else []
    whom = ("the " + " ".join(words_after)) if words_after else "a colleague"
    if done is None:
        # Identified first where the policy covers the hand-off too.
        auths = guards(c, handoff) if c.reading is not None else []
        if auths:
            who = identified(c, auths)
            if "role" in who:
                return who
        arguments = handoff_arguments(c, handoff, tool, what, rule)
        if isinstance(arguments, str):
            return say(arguments)
        return call(handoff.name, arguments)
    earlier = (before or "").strip()
    mine = identified_ids(c)
    for param in handoff.id_params:
        named = [v for v, _ in c.ids_for(param, c.user_text)]
        if param in mine and any(v != mine[param] for v in named):
            other = next(v for v in named if v != mine[param])
            earlier = (f"I can't find {c.record_noun(param)} {other} on your account, so I passed "
                       f"you on under your own. " + earlier).strip()
    if done[2].get("ok"):
        if tool is not None:
            return say(f"That is more than I may {tool.verb} myself, so I have passed you to {whom}, "
                       "who will take it from here.")
        lead = earlier + " " if earlier else ""
        return say(f"{lead}I have passed you to {whom}, who will take it from here.")
    return retry_or_report(c, handoff.name, done[1], f"pass you to {whom}")


def handoff_arguments(c, handoff, tool, what, rule):
    """A hand-off's arguments, or a question for a required id the person
    has not given (asked once; then it goes without)."""
    summary = (f"The person asks to {what}, which is past what the policy lets me do myself."
               if what else "The customer wrote: " + " ".join(c.opening.split())[:300])
    cues = " ".join([(rule or {}).get("text") or ""] + c.users).lower()
    known = dict(c.known_ids())
    mine = identified_ids(c)
    arguments, missing = {}, []
    for param, spec in handoff.params.items():
        required = param in handoff.required
        value = None
        if param in handoff.id_params or is_id_param(param, spec):
            # The identified person's own id before any other they name.
            found = c.ids_for(param, c.user_text)
            value = mine.get(param) or (found[0][0] if found else known.get(param))
            if value is None and param in IDENTITY_PARAMS:
                value = c.identity_value(param, handoff)
        elif handoff.options(param):
            value = c.value_for(param, handoff) or pick_option(handoff.options(param), cues)
        elif param in FREE_TEXT or spec.get("type") in (None, "string") and param not in IDENTITY_PARAMS:
            value = c.value_for(param, handoff) if param not in FREE_TEXT else None
            value = value or summary
        else:
            value = c.identity_value(param, handoff) if param in IDENTITY_PARAMS else c.value_for(param, handoff)
        if value is None:
            if required:
                missing.append(param)
            continue
        arguments[param] = value
    if missing:
        noun = " and the ".join(id_noun(p, handoff) for p in missing)
        question = f"To pass you on, could you give me the {noun}?"
        if not c.asked(question.lower()):
            return question
    return typed(handoff, arguments)


def identified_ids(c):
    """The ids of the person an identifying tool found: its answer's ids
    and the ids it was called with."""
    out = {}
    for name, args, result in c.calls:
        if not result.get("ok") or c.tool(name) not in c.identify_tools():
            continue
        found = result.get("result")
        if isinstance(found, dict):
            out.update({k: v for k, v in found.items() if (k == "id" or is_id_param(k, {}))
                        and isinstance(v, (str, int))})
        out.update({k: v for k, v in args.items() if is_id_param(k, {})})
    return out


def pick_option(options, cues):
    """The option of a hand-off's enum the words name (`fraud` for "card
    stolen … fraud team"), by its words' starts; else one meaning other
    or a person's request; else the first."""
    said = check_words(cues)
    best, score = None, 0
    for option in options:
        parts = [w for w in re.split(r"[_\s-]+", str(option).lower()) if len(w) > 3]
        hits = sum(1 for w in parts if any(x.startswith(w[:5]) for x in said))
        if hits > score:
            best, score = option, hits
    if best is not None:
        return best
    # Asked for by the person: an option saying so ("staff_requested").
    asked = next((o for o in options if re.search(r"request", str(o).lower())), None)
    if asked is not None and asks_for_human(cues, []):
        return asked
    return next((o for o in options if str(o).lower() in ("other", "general")), options[0])


def masked(c, reply):
    """A reply that shows none of what a never-reveal rule of the reading
    protects (`masked_text`)."""
    if c.reading is None or not reply.get("content"):
        return reply
    return dict(reply, content=masked_text(c, reply["content"]))


def masked_text(c, text):
    """Words that show none of what a never-reveal rule of the reading
    protects: a protected field's value from a tool's answer as its last
    two characters, and, where the rule names card numbers, any long run of
    digits as its last four."""
    if c.reading is None:
        return text
    fields, cards = c.reading.protected()
    for value in protected_values(c, fields):
        plain = re.sub(r"\W", "", value)
        tail = plain[-4:] if len(plain) >= 8 else plain[-2:]
        text = re.sub(re.escape(value), "ending in " + tail, text, flags=re.IGNORECASE)
    if cards:
        text = re.sub(r"(?<!\d)\d(?:[ -]?\d){11,18}(?!\d)",
                      lambda m: "ending in " + re.sub(r"\D", "", m.group(0))[-4:], text)
    return text


def protected_values(c, fields):
    """The values of protected fields in the tools' answers (a field is
    protected as the checks read it: `card_number` protects
    `primary_card_number`; `pin` protects `card_pin`, not `pinned`)."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                key = k.lower()
                parts = re.split(r"[_.-]", key)
                if isinstance(x, (str, int, float)) and not isinstance(x, bool) and any(
                        (f in key) if "_" in f else (f in parts) for f in fields):
                    text = str(x)
                    if sum(ch.isalnum() for ch in text) >= 4 and text not in out:
                        out.append(text)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for _, _, result in c.calls:
        walk(result.get("result"))
    return sorted(out, key=len, reverse=True)


def act_without_id(c, tool, thing):
    arguments = {}
    for param in tool.required:
        value = (c.identity_value(param, tool) if param in IDENTITY_PARAMS else None) or c.value_for(param, tool)
        if value is None and param in FREE_TEXT:
            value = free_text(c, param)
        if value is None:
            label = param.replace("_", " ")
            if c.asked(f"what {label}") or c.asked(f"your {label}"):
                return say(f"Without the {label} I can't go on, sorry.")
            return say(f"What is your {label}?" if "email" in param else f"What {label} would you like?")
        arguments[param] = value
    arguments = typed(tool, arguments)
    first = order_first(c, tool, arguments)
    if first is not None:
        return first
    if needs_confirmation(c, tool) and not tool.reads:
        proposal = masked_text(c, f"I can {tool.verb} this for you ({', '.join(f'{k.replace(chr(95), chr(32))} {v}' for k, v in arguments.items() if k not in FREE_TEXT)}). Shall I go ahead?")
        last = c.agent_texts[-1] if c.agent_texts else ""
        if c.last_call(tool.name, arguments) is None:
            if not last.endswith(proposal):
                return say(proposal)
            if not agreed(c.last_user):
                return say("Alright, I won't go ahead.")
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
                rid = next((v for k, v in r.items() if k == "id" or is_id_param(k, {})), "?")
                status = r.get("status")
                lines.append(f"{rid} ({status})" if status else str(rid))
        return say(f"I found these: {', '.join(lines)}.")
    if isinstance(result, dict):
        return say(describe(result, thing, "").replace(" :", ":"))
    return say(f"Done: {tool.name.replace('_', ' ')} succeeded.")


if __name__ == "__main__":
    serve(respond)
