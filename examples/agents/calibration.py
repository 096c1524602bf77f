"""What the calibration agents share: reading any spec's tools from the
request, the conversation so far, and the facts a person gave.

Standard library only. Nothing here knows a particular spec: tools are
classified by their names and descriptions (a read verb such as get, find,
list, check; anything else changes the world), the id parameter is the one
named `id` or `*_id`, and ids in a person's words are found by the shape of
the examples the parameter's description gives ('#W1001' -> `#W` and four
digits) or, without an example, as words that mix letters and digits.
"""

import json
import re
import sys

READ_VERBS = {"get", "find", "list", "search", "lookup", "look", "check", "show",
              "fetch", "read", "view", "query", "track", "describe", "retrieve"}
FREE_TEXT = {"reason", "note", "notes", "comment", "message", "description", "summary"}
# Nouns for the person a record belongs to (`find_user_id_by_email` finds one).
OWNER_WORDS = {"user", "customer", "client", "member", "patient", "guest", "passenger", "profile"}
# Parameters that say who a person is, by which a tool may find them.
IDENTITY_PARAMS = {"email", "email_address", "first_name", "last_name", "name", "full_name", "zip",
                   "zip_code", "postal_code", "phone", "phone_number", "dob", "date_of_birth"}
# Words a person uses for what a tool's verb does.
SYNONYMS = {
    "refund": ["refund", "money back", "charged twice", "reimburse"],
    "cancel": ["cancel"],
    "update": ["change", "update", "modify", "set ", "wrong", "edit", "correct"],
    "change": ["change", "update", "modify", "set ", "wrong", "edit"],
    "modify": ["change", "update", "modify", "set ", "wrong", "edit"],
    "transfer": ["transfer", "send money", "move money", "pay "],
    "freeze": ["freeze", "block", "lock"],
    "unfreeze": ["unfreeze", "unblock", "unlock"],
    "close": ["close"],
    "open": ["open"],
    "return": ["return"],
    "exchange": ["exchange", "swap"],
    "book": ["book", "reserve", "new", "create", "set up"],
    "pay": ["pay"],
    "add": ["add", "new", "set up", "create", "save", "book"],
    "create": ["create", "new", "set up", "open"],
}
ROLE_PREFIXES = ("from_", "to_", "source_", "destination_", "target_", "new_", "old_", "original_")
# Words before an id that tell which role it plays ("from A-1 to A-2").
ROLE_CUES = {"from_": ["from", "leaves", "out of", "source"],
             "source_": ["from", "leaves", "out of", "source"],
             "to_": [" to ", "goes to", "into", "destination"],
             "destination_": [" to ", "goes to", "into", "destination"],
             "target_": [" to ", "goes to", "into"]}
READ_CUES = ["status", "where", "check", "details", "update on", "know", "look up",
             "find", "show", "list", "balance", "news", "track", "how much", "what",
             "which", "pull up", "lost track", "about my"]
STATUS_WORDS = {"pending", "processing", "shipped", "delivered", "cancelled", "canceled",
                "refunded", "returned", "exchanged", "active", "frozen", "closed", "open",
                "suspended", "completed", "paid", "unpaid", "overdue", "booked", "confirmed"}
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A date and a clock in a person's words ("2026-12-16 at 11:00", "2026-12-16T11:00:00").
DATE_TIME = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:T|\s+at\s+|\s+)(\d{1,2}):(\d{2})(?::(\d{2}))?")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# Verbs of a tool that hands the person over to someone (`transfer_to_nurse`).
HANDOFF_VERBS = {"transfer", "hand", "handoff", "escalate", "connect", "route", "forward", "refer"}
# Words that ask for something new, whatever the tool's verb.
NEW_CUES = ["new", "create", "set up"]
# Words a person asks for someone to talk to with.
HANDOFF_CUES = ["talk", "speak", "connect", "put me through", "transfer", "hand me", "escalate"]
# A description's first word that says nothing of what the tool does.
VAGUE_VERBS = {"request", "make", "use", "perform", "do", "handle", "process", "submit", "send",
               "this", "the", "a", "an", "returns", "tool"}


def words(text):
    return re.findall(r"[a-z0-9']+", (text or "").lower())


class Tool:
    def __init__(self, spec):
        fn = spec.get("function", spec)
        self.name = fn["name"]
        self.description = fn.get("description") or ""
        schema = fn.get("parameters") or fn.get("inputSchema") or {}
        self.params = schema.get("properties") or {}
        self.defs = schema.get("$defs") or schema.get("definitions") or {}
        self.required = schema.get("required") or list(self.params)
        self.name_words = self.name.lower().split("_")
        self.verb = self.name_words[0]
        self.reads = self.verb in READ_VERBS
        # In the order `required` lists them: a request's schema may come
        # with its properties sorted by name.
        order = {p: i for i, p in enumerate(self.required)}
        self.id_params = sorted((p for p in self.params if p == "id" or p.endswith("_id")),
                                key=lambda p: order.get(p, len(order)))
        self.id_param = self.id_params[0] if self.id_params else None
        # The description's own verb ("Move a booked appointment …" for
        # `reschedule_appointment`): a word a person may use for the act.
        first = (words(self.description)[:1] or [""])[0]
        self.described_verb = (first if first != self.verb and first not in READ_VERBS
                               and first not in VAGUE_VERBS and first.isalpha() else None)
        # Whom a hand-off tool hands the person to (`transfer_to_nurse` ->
        # nurse, `transfer_to_human_agents` -> human agent).
        self.recipient = None
        if self.verb in HANDOFF_VERBS and "to" in self.name_words[1:]:
            after = self.name_words[self.name_words.index("to") + 1:]
            self.recipient = " ".join(w[:-1] if w.endswith("s") else w for w in after) or None

    def options(self, param):
        """The values a parameter may take (see `options`)."""
        return options(self.params.get(param) or {})

    def id_pattern(self, param=None):
        """A regex for this tool's ids (or one parameter's), from the examples
        its descriptions give; `.generalized` on the pattern says whether
        the examples' letters were read as any letters (`sara_doe_496`)."""
        if param is not None:
            texts = [str(self.params.get(param, {}).get("description", ""))]
        else:
            texts = [self.description] + [str(v.get("description", "")) for v in self.params.values()]
        for text in texts:
            examples = [e for e in re.findall(r"'([^'\s]+)'", text) if any(c.isdigit() for c in e)]
            if examples:
                shapes = [id_shape(e, len(examples) > 1) for e in examples]
                source = "|".join(dict.fromkeys(src for src, _ in shapes))
                pattern = re.compile(r"(?<![\w#])(?:" + source + r")(?!\w)", re.IGNORECASE)
                return IdPattern(pattern, any(g for _, g in shapes)), examples[0]
        if param is not None:
            return None, None
        return IdPattern(ANY_ID, True), None

    def thing(self):
        """What the tool's records are called (`order` for order_id)."""
        if self.id_param and self.id_param != "id":
            return self.id_param[: -len("_id")].replace("_", " ")
        return self.name_words[-1].rstrip("s") if len(self.name_words) > 1 else "record"


def options(spec):
    """The values a parameter's schema lets it take: its enum, else the
    options its description lists ("either 'no longer needed' or 'ordered
    by mistake'"); empty for a free value."""
    if spec.get("enum"):
        return [str(v) for v in spec["enum"]]
    text = str(spec.get("description") or "")
    m = re.search(r"\b(?:either|one of|must be|should be|can be)\b(.*)", text, re.IGNORECASE)
    if not m:
        return []
    listed = re.findall(r"'([^']{1,60})'|\"([^\"]{1,60})\"", m.group(1).split(". ")[0])
    listed = [a or b for a, b in listed]
    return listed if len(listed) >= 2 else []


# An id of no known shape: letters, maybe a dash, then three digits or more.
ANY_ID = re.compile(r"(?<![\w#])#?[A-Za-z]*-?\d{3,}[A-Za-z0-9-]*(?!\w)")


class IdPattern:
    """A compiled id regex and whether it reads an example's letters as any
    letters (then an id another kind's literal shape claims is not one)."""

    def __init__(self, pattern, generalized):
        self.pattern = pattern
        self.generalized = generalized

    def finditer(self, text):
        return self.pattern.finditer(text)

    def fullmatch(self, text):
        return self.pattern.fullmatch(text)


def id_shape(example, several):
    """The regex source of ids shaped like one example, and whether its
    letters stand for any letters. Words joined by underscores before digits
    (`sara_doe_496`) are names: any words, any digits, unless several
    examples list the words that may appear (`gift_card_0000000` or
    `credit_card_0000000`). A code whose letters and digits mix (`ZFA04Y`)
    is any such code of its length. Otherwise letters are kept and each
    digit is a digit (`#W1001`: `#W` and four digits)."""
    if re.fullmatch(r"[a-z]+(?:_[a-z]+)*_\d+", example):
        head = example.rsplit("_", 1)[0]
        if several:
            return re.escape(head) + r"_\d+", False
        return r"[a-z]+(?:_[a-z]+){%d}_\d+" % head.count("_"), True
    if re.fullmatch(r"[A-Z0-9]+", example) and re.search(r"\d[A-Z]", example):
        return r"(?=[A-Z]*\d)[A-Z0-9]{%d}" % len(example), True
    shape = ""
    for c in example:
        if c.isdigit():
            shape += r"\d"
        elif c.isalpha():
            shape += re.escape(c)
        else:
            shape += re.escape(c) + "?"
    return shape, False


def entity(param):
    """The kind of record an id parameter names (`from_account_id` -> `account`)."""
    name = param[: -len("_id")] if param.endswith("_id") else param
    for prefix in ROLE_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def role(param):
    return next((p for p in ROLE_PREFIXES if param.startswith(p)), None)


def normalise_id(found, example):
    """An id as the tool writes it: the example's prefix and case."""
    if example is None:
        return found
    prefix = "".join(c for c in example if not c.isalnum())
    body = found.lstrip("".join(set(prefix)) or "#")
    if example.isupper() or any(c.isupper() for c in example):
        body = body.upper()
    return (prefix + body) if example.startswith(prefix) and prefix else body


class Conversation:
    def __init__(self, request):
        self.messages = request["messages"]
        self.tools = [Tool(t) for t in request.get("tools") or []]
        self.system = " ".join(m.get("content") or "" for m in self.messages if m["role"] == "system")
        self.users = [m.get("content") or "" for m in self.messages if m["role"] == "user"]
        self.opening = self.users[0] if self.users else ""
        self.user_text = " ".join(self.users)
        self.last_user = self.users[-1] if self.users else ""
        self.agent_texts = [m.get("content") or "" for m in self.messages
                            if m["role"] == "assistant" and m.get("content")]
        self.calls = []  # (name, arguments, result) in order
        pending = {}
        for m in self.messages:
            if m["role"] == "assistant":
                for c in m.get("tool_calls") or []:
                    pending[c.get("id")] = c["function"]
            elif m["role"] == "tool":
                fn = pending.get(m.get("tool_call_id"), {"name": m.get("name"), "arguments": "{}"})
                try:
                    result = json.loads(m.get("content") or "")
                    if not isinstance(result, dict):
                        result = {"ok": False, "error": {"kind": "malformed", "message": "an unreadable answer"}}
                except ValueError:
                    result = {"ok": False, "error": {"kind": "malformed", "message": "an unreadable answer"}}
                args = fn.get("arguments") or "{}"
                try:
                    args = json.loads(args) if isinstance(args, str) else args
                except ValueError:
                    args = {}
                self.calls.append((fn["name"], args, result))

    def tool(self, name):
        return next((t for t in self.tools if t.name == name), None)

    def intent(self):
        """The tool the person wants, from their opening message, else from
        everything they said; None when nothing fits. A tool that identifies
        the person is the intent only when nothing else fits ("what is my
        user id?")."""
        auths = self.identify_tools()
        return (self.intent_in(self.opening, auths) or self.intent_in(self.user_text, auths)
                or (self.intent_in(self.opening, []) if auths else None))

    def intent_in(self, said, auths=None):
        """A write tool whose verb the words use, else the read tool they fit
        best; None when nothing fits. The tools that identify the person
        (`auths`, by default the policy's) are left out."""
        text = " " + said.lower() + " "
        # "an update on my order" asks for news, not for a change.
        text = re.sub(r"\bupdates? on\b", "news on", text)
        said_words = set(words(text))
        plain = words(text.replace("-", " "))
        said_words |= {a + b for a, b in zip(plain, plain[1:])}
        auths = self.identify_tools() if auths is None else auths
        candidates = [t for t in self.tools if t not in auths]
        def nouns_read(word):
            # `list_transfers` reads transfers: "my transfer" names one.
            return any(t.reads and any(w.rstrip("s") == word for w in t.name_words[1:]) for t in candidates)

        best, best_score = None, 0
        for t in candidates:
            if t.reads:
                continue
            cues = SYNONYMS.get(t.verb, [t.verb]) + ([t.described_verb] if t.described_verb else [])
            if t.recipient:
                # "can I talk to a nurse?": a hand-off is asked for by whom.
                head = t.recipient.split()[0]
                if re.search(r"\b" + re.escape(head) + r"s?\b", text) and any(h in text for h in HANDOFF_CUES):
                    score = 5
                    if score > best_score:
                        best, best_score = t, score
                continue
            # Whole words: "unfreeze" is not "freeze"; "my transfer" names a
            # thing, not the act.
            def used(c):
                # A typo that swaps letters ("reufnd") still names the verb.
                if " " not in c.strip() and len(c.strip()) >= 5 and any(
                        w != c.strip() and len(w) == len(c.strip()) and w[0] == c[0]
                        and sorted(w) == sorted(c.strip()) for w in said_words):
                    return True
                for m in re.finditer(r"\b" + re.escape(c.strip()) + r"\b", text):
                    # "set up" a new thing is no change of one.
                    if c.strip() == "set" and text[m.end():].startswith(" up"):
                        continue
                    before = text[: m.start()].split()[-1:] 
                    if (c.strip() == t.verb and before and before[0] in ("my", "the", "a", "your", "this", "that")
                            and nouns_read(c.strip())):
                        continue
                    return True
                return False
            # "a new certificate": words that ask for something new name a
            # write tool whose noun they come with.
            # A tool whose own verb is used outranks one named this way ("a
            # new claim" is not "new evidence for my claim's appeal").
            noun_said = any(w.rstrip("s") in said_words for w in t.name_words[1:] if len(w) > 3)
            own_verb = any(used(c) for c in cues if c not in NEW_CUES)
            # Only a verb that may make something ("send", "file", "book"),
            # not one known to change or end what is ("update", "cancel").
            makes = not any(t.verb == k or t.verb in v for k, v in SYNONYMS.items()
                            if "new" not in v)
            if not own_verb and not (makes and noun_said and any(used(c) for c in NEW_CUES)):
                continue
            score = (3 if own_verb else 0) + sum(
                1 for w in t.name_words[1:] if w in said_words or w.rstrip("s") in said_words)
            # "my profile" is the person's own record, not one of theirs.
            score += sum(1 for w in t.name_words[1:] if w in OWNER_WORDS and "profile" in said_words)
            score += sum(1 for p in t.params if p not in FREE_TEXT and p != t.id_param
                         and any(w in said_words for w in p.split("_")))
            if score > best_score:
                best, best_score = t, score
        if best:
            return best
        # "Something is wrong with my transfer": a read's noun after "my"
        # says what to look at, as a read cue would.
        my_noun = any(re.search(r"\bmy " + re.escape(w.rstrip("s")) + r"s?\b", text)
                      for t in candidates if t.reads for w in t.name_words[1:] if len(w) > 3)
        if not any(c in text for c in READ_CUES) and not self.ids_in(said) and not my_noun:
            return None
        email = EMAIL.search(said)
        for t in candidates:
            if t.reads and "email" in t.params and email and len(self.ids_in(said)) != 1:
                return t
        # Reads of one record, reads that take nothing (`list_all_airports`),
        # and searches whose every argument the words give.
        def given(p, t):
            v = self.value_for(p, t)
            return v is not None and str(v).lower() in said.lower()
        searches = [t for t in candidates if t.reads and not t.id_params and t.required
                    and all(given(p, t) for p in t.required)]
        readers = [t for t in candidates if t.reads and (t.id_param or not t.required)] + searches
        if not readers:
            return None
        known = self.known_ids()

        def fit(t):
            # Name words the person used: the record's own noun a little,
            # other nouns (`balance`, `transfers`) more; an id of its kind in
            # the words, or one already known, makes it answerable. "My
            # profile" is the person's own record.
            score = 0.0
            for w in t.name_words[1:]:
                if w in said_words or w.rstrip("s") in said_words:
                    score += 2 if t.id_param and w.rstrip("s") == entity(t.id_param) else 3
                elif w in OWNER_WORDS and "profile" in said_words:
                    score += 3
            # "list the transfers": the tool's own verb and noun together
            # outweigh a noun other tools share ("from my account").
            verb = t.name_words[0] if t.name_words else ""
            if any(re.search(r"\b" + re.escape(verb) + r"\b(?:\s+\w+){0,2}?\s+" + re.escape(w.rstrip("s")),
                             text) for w in t.name_words[1:] if len(w) > 3):
                score += 2
            if t.id_param is None:
                return score + (3 if t in searches else -0.5)
            if self.ids_for(t.id_param, said):
                score += 3
            elif t.id_param in known and not self.ids_in(said):
                score += 1
            return score
        def first_said(t):
            # Of equal fits, the one whose noun the person said first.
            places = [m.start() for w in t.name_words[1:] if len(w) > 3
                      for m in [re.search(r"\b" + re.escape(w.rstrip("s")), text)] if m]
            return min(places, default=len(text))
        return max(readers, key=lambda t: (fit(t), -first_said(t)))

    def known_ids(self):
        """Ids the tools' answers gave, by parameter name (`customer_id` from
        the identifying lookup), first seen first."""
        known = {}
        for _, _, result in self.calls:
            value = result.get("result") if result.get("ok") else None
            if isinstance(value, dict):
                for k, v in value.items():
                    if (k == "id" or k.endswith("_id")) and isinstance(v, (str, int)):
                        known.setdefault(k, v)
        return known

    def pattern_for(self, param):
        """The id shape of a parameter: its own example, else the example of
        any tool's parameter naming the same kind of record."""
        same = [(t, p) for t in self.tools for p in t.id_params if entity(p) == entity(param)]
        for t, p in sorted(same, key=lambda tp: tp[1] != param):
            pattern, example = t.id_pattern(p)
            if pattern is not None:
                return pattern, example
        for t in self.tools:
            if param in t.params:
                return t.id_pattern()
        return IdPattern(ANY_ID, True), None

    def claimed_by_other(self, param, value):
        """Whether another kind of id's literal shape fits a value
        (`credit_card_1000001` is a payment method, not a user id)."""
        for t in self.tools:
            for p in t.id_params:
                if entity(p) == entity(param):
                    continue
                pattern, _ = t.id_pattern(p)
                if pattern is not None and not pattern.generalized and pattern.fullmatch(value):
                    return True
        return False

    def ids_for(self, param, text):
        """Ids of a parameter's kind in some words, in order, with where each
        starts: by the kind's shape, else after its name ("the payment
        method is paypal_9497703", "my ID is sara_doe_496")."""
        pattern, example = self.pattern_for(param)
        found = []
        for m in pattern.finditer(text or ""):
            value = normalise_id(m.group(0), example)
            if pattern.generalized and self.claimed_by_other(param, value):
                continue
            if value not in [v for v, _ in found]:
                found.append((value, m.start()))
        if not found:
            for m in self.labelled(param).finditer(text or ""):
                value = m.group(1)
                if any(ch.isdigit() for ch in value) and not self.claimed_by_other(param, value) \
                        and value not in [v for v, _ in found]:
                    found.append((value, m.start(1)))
        return found

    def labelled(self, param):
        """A regex for an id named by its kind: "the payment method is X",
        "reservation ID: X"; the person's own id also as "my ID is X"."""
        kind = entity(param).replace("_", " ")
        names = [re.escape(kind)]
        if kind in OWNER_WORDS:
            names.append(r"my")
        return re.compile(r"\b(?:" + "|".join(names) + r")(?:\s+(?:id|number|code|no\.?))?"
                          r"\s*(?:is|:|=)\s+(#?[A-Za-z0-9][\w-]*)", re.IGNORECASE)

    def id_for(self, tool, param, text):
        """The id the words give for one parameter: by its role's cue words
        when the tool takes several ids of one kind, else the first."""
        found = self.ids_for(param, text)
        if not found:
            return None
        siblings = [p for p in tool.id_params if entity(p) == entity(param)]
        r = role(param)
        if len(siblings) > 1 and r in ROLE_CUES:
            low = (text or "").lower()
            for value, at in found:
                before = low[max(0, at - 30):at]
                cues = ROLE_CUES[r]
                others = [c for p in siblings if p != param and role(p) in ROLE_CUES for c in ROLE_CUES[role(p)]]
                last = max((before.rfind(c) for c in cues), default=-1)
                other = max((before.rfind(c) for c in others), default=-1)
                if last >= 0 and last > other:
                    return value
            # No cue for this role: an id cued for another role is not this
            # one's; of the rest, only a single one is meant, else ask.
            taken = set()
            for value, at in found:
                before = low[max(0, at - 30):at]
                other = max((before.rfind(c) for c in others), default=-1)
                last = max((before.rfind(c) for c in cues), default=-1)
                if other >= 0 and other > last:
                    taken.add(value)
            rest = list(dict.fromkeys(v for v, _ in found if v not in taken))
            return rest[0] if len(rest) == 1 else None
        return found[0][0]

    def ids_in(self, text, tool=None):
        found = []
        tools = [tool] if tool else [t for t in self.tools if t.id_param]
        for t in tools:
            for value, _ in self.ids_for(t.id_param, text):
                if value not in found:
                    found.append(value)
        return found

    def choice_for(self, param, tool):
        """Which of a parameter's options (tool.options) the person's words
        name, the schema's word (`feeling_better`) for their words ("feeling
        better"): a phrase of several words anywhere, a single word only as
        the reason they give ("the reason is other"); the last message
        first. None when they name none."""
        choices = options(tool.params.get(param) or {})
        for text in reversed(self.users):
            low = " " + re.sub(r"[_-]", " ", text.lower()) + " "
            found = []
            for option in choices:
                said = re.sub(r"[_-]", " ", option.lower()).strip()
                if " " in said:
                    m = re.search(r"\b" + re.escape(said) + r"\b", low)
                else:
                    # "the reason is other", "the cabin is economy".
                    names = "|".join(["reason", "because"] + [re.escape(w) for w in param.split("_") if len(w) > 2])
                    m = re.search(r"\b(?:" + names + r")\b[^.?!]{0,12}?\b" + re.escape(said) + r"\b", low)
                if m:
                    found.append((m.start(), option))
            if found:
                return min(found)[1]
        return None

    def value_for(self, param, tool):
        """A value the person gave for a parameter, from their words."""
        spec = tool.params.get(param, {})
        if "email" in param:
            m = EMAIL.search(self.user_text)
            return m.group(0) if m else None
        choices = options(spec)
        if choices:
            picked = self.choice_for(param, tool)
            if picked is not None or param in FREE_TEXT:
                return picked
        if param in FREE_TEXT:
            m = (re.search(r"because ([^.?!]+)", self.user_text, re.IGNORECASE)
                 or re.search(r"\breason(?: is|:)\s+([^.?!)]+)", self.user_text, re.IGNORECASE))
            return m.group(1).strip() if m else None
        names = [re.escape(w) for w in param.split("_") if w not in ("new", "the")]
        # The description's noun ("The second line of the address, such as
        # …" -> "second line of (the) address"), as a person may say it.
        noun = re.split(r"[,.(]| such as", str(spec.get("description") or ""))[0].split()
        noun = noun[1:] if noun and noun[0].lower() in ("the", "a", "an") else noun
        if 1 < len(noun) <= 6:
            names = [r"\s+".join("(?:the\\s+)?" if w.lower() == "the" else re.escape(w) for w in noun)
                     .replace("(?:the\\s+)?\\s+", "(?:the\\s+)?")] + names
        number = spec.get("type") in ("number", "integer")
        end = (r"(?:,\s*(?:if|please|thanks|thank|not)\b|\s+and\s+(?:the\s+)?[\w ]{1,60}?\s+(?:is|to)\b"
               r"|,\s*(?:the\s+|my\s+)?[\w ]{1,60}?\s+is\b"
               r"|[?!]|\.(?:\s|$)|$)")
        found = None
        for text in reversed(self.users):
            for name in names:
                m = re.search(r"\b" + name + r"\b(?:\s+in\s+\w+)?\s*(?:to|is|as|:)\s+(.+?)" + end,
                              text, re.IGNORECASE)
                if m:
                    found = m.group(1).strip()
                    break
            if found is None:
                m = re.search(r"the new " + names[-1] + r" is (.+?)" + end, text, re.IGNORECASE)
                if m:
                    found = m.group(1).strip()
            if found is not None:
                break
        if spec.get("format") == "date-time":
            # "2026-12-16 at 11:00" as the schema writes it: 2026-12-16T11:00:00.
            for text in ([found] if found else []) + list(reversed(self.users)):
                m = DATE_TIME.search(text)
                if m:
                    return "%sT%02d:%s:%s" % (m.group(1), int(m.group(2)), m.group(3), m.group(4) or "00")
            return None
        if number:
            # A number standing alone, not the digits of an id (`A-2002`).
            standalone = r"(?<![\w#-])\$?(\d+(?:,\d{3})*(?:\.\d+)?)(?![\w-])"
            for text in ([found] if found else []) + list(reversed(self.users)):
                m = re.search(standalone, text)
                if m:
                    value = float(m.group(1).replace(",", ""))
                    return value if spec.get("type") == "number" else int(value)
            return None
        return found

    def last_call(self, name, args=None):
        for call in reversed(self.calls):
            if call[0] == name and (args is None or call[1] == args):
                return call
        return None

    def asked(self, phrase):
        return any(phrase in t.lower() for t in self.agent_texts)

    def identify_tool(self):
        """The first tool that identifies the person (see identify_tools)."""
        tools = self.identify_tools()
        return tools[0] if tools else None

    def identify_tools(self):
        """The tools a policy sentence says identify the person first: named
        ("Always identify the customer by email with `find_customer_by_email`"),
        or, where the sentence names none ("authenticate the user identity by
        locating their user id via email, or via name + zip code"), every
        read that finds a person by what the sentence names. Named ones first."""
        named, finders = [], []
        for sentence in policy_sentences(self.system):
            s = sentence.lower()
            if not any(w in s for w in ("identify", "authenticate", "verify")):
                continue
            for t in self.tools:
                if t.name in sentence and ("email" in t.params or t in self.person_finders()) \
                        and t not in named:
                    named.append(t)
            # In the order the sentence names what they find by ("via
            # email, or via name + zip code").
            said = words(s)
            at = {}
            for t in self.person_finders():
                cues = [w for p in t.params for w in p.split("_") if w not in ("name", "first", "last")]
                places = [said.index(w) for w in cues if w in said]
                if places and t not in finders:
                    at[t.name] = min(places)
                    finders.append(t)
            finders.sort(key=lambda t: at.get(t.name, 0))
        return named + [t for t in finders if t not in named]

    def person_finders(self):
        """Reads that find a person by who they are (`find_user_id_by_email`,
        `find_user_id_by_name_zip`): no id parameter, only identity ones,
        and a person's noun in the name."""
        return [t for t in self.tools
                if t.reads and not t.id_params and t.params and set(t.params) <= IDENTITY_PARAMS
                and any(w in OWNER_WORDS for w in t.name_words[1:])]

    def identity_value(self, param):
        """A value of an identity parameter the person gave: their email, a
        name part ("my first name is Noah", "I'm Noah Patel", a signature),
        a zip code."""
        if "email" in param:
            m = EMAIL.search(self.user_text)
            return m.group(0) if m else None
        label = param.replace("_", " ")
        # A whole name is two words ("my name is Maya Chen"); anything else one.
        value = r"([A-Za-z'-]+\s+[A-Za-z'-]+)" if param in ("name", "full_name") else r"([\w'-]+)"
        for text in reversed(self.users):
            m = re.search(r"\b" + re.escape(label) + r"(?: code)?\b\s*(?:is|:)\s*" + value, text, re.IGNORECASE)
            if m:
                return m.group(1)
        if param in ("dob", "date_of_birth", "birth_date", "birthdate"):
            m = re.search(r"\b(?:date of birth|birth ?date|dob|birthday|born)\b[^.?!\d]{0,20}(\d{4}-\d{2}-\d{2})",
                          self.user_text, re.IGNORECASE)
            return m.group(1) if m else None
        if param in ("zip", "zip_code", "postal_code"):
            m = re.search(r"\b(?:zip|postal|postcode)\b[^.?!\d]{0,20}(\d{5})\b", self.user_text, re.IGNORECASE)
            return m.group(1) if m else None
        if param in ("first_name", "last_name", "name", "full_name"):
            full = None
            for text in self.users:
                m = (re.search(r"\b(?:I'm|I am|my name is|this is)\s+([A-Z][a-z]+)\s+([A-Z][a-z]+)\b", text)
                     or re.search(r"(?i:regards|thanks|thank you|cheers|best|sincerely),?\s+([A-Z][a-z]+)\s+([A-Z][a-z]+)\b",
                                  text))
                if m:
                    full = (m.group(1), m.group(2))
                    continue
                # Written in lowercase, a name is read only where it is named
                # as one ("my name is maya chen") or is an answer's first
                # words ("i'm maya chen.").
                m = (re.search(r"\bmy (?:full )?name is ([a-z]+) ([a-z]+)\b", text, re.IGNORECASE)
                     or (text is not self.opening
                         and re.match(r"\s*(?:i'm|i am)\s+([a-z]+)\s+([a-z]+)\s*(?:[.,]|$)", text, re.IGNORECASE)))
                if m:
                    full = (m.group(1).capitalize(), m.group(2).capitalize())
            if full:
                return {"first_name": full[0], "last_name": full[1]}.get(param, " ".join(full))
        return None


def policy_sentences(text):
    """The policy's sentences, a sentence wrapped over lines joined again
    (a line that starts a bullet, a heading or a paragraph starts anew)."""
    joined = re.sub(r"[ \t]*\n(?![ \t]*(?:[-*#>]|\d+[.)]|\n))[ \t]*", " ", text)
    return [s for s in re.split(r"(?<=[.!?])\s+|\n", joined) if s.strip()]


def say(text):
    return {"role": "assistant", "content": text}


def call(name, arguments):
    import hashlib
    digest = hashlib.sha256((name + json.dumps(arguments, sort_keys=True)).encode()).hexdigest()[:12]
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_" + digest, "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def serve(respond):
    """Protocol v1: one request per line in, one reply per line out."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        try:
            reply = {"id": request["id"], "message": respond(Conversation(request))}
        except Exception as error:  # a bug in the agent is a row error, not a crash
            reply = {"id": request.get("id"), "error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
