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
FREE_TEXT = {"reason", "note", "notes", "comment", "message", "description"}
# Words a person uses for what a tool's verb does.
SYNONYMS = {
    "refund": ["refund", "money back", "charged twice", "reimburse"],
    "cancel": ["cancel"],
    "update": ["change", "update", "modify", "set ", "wrong", "edit", "correct"],
    "change": ["change", "update", "modify", "wrong", "edit"],
    "modify": ["change", "update", "modify", "wrong", "edit"],
    "transfer": ["transfer", "send money", "move money", "pay "],
    "freeze": ["freeze", "block", "lock"],
    "unfreeze": ["unfreeze", "unblock", "unlock"],
    "close": ["close"],
    "open": ["open"],
    "return": ["return"],
    "exchange": ["exchange", "swap"],
    "book": ["book", "reserve"],
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
             "which", "pull up", "lost track"]
STATUS_WORDS = {"pending", "processing", "shipped", "delivered", "cancelled", "canceled",
                "refunded", "returned", "exchanged", "active", "frozen", "closed", "open",
                "suspended", "completed", "paid", "unpaid", "overdue", "booked", "confirmed"}
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def words(text):
    return re.findall(r"[a-z0-9']+", (text or "").lower())


class Tool:
    def __init__(self, spec):
        fn = spec.get("function", spec)
        self.name = fn["name"]
        self.description = fn.get("description") or ""
        schema = fn.get("parameters") or fn.get("inputSchema") or {}
        self.params = schema.get("properties") or {}
        self.required = schema.get("required") or list(self.params)
        self.name_words = self.name.lower().split("_")
        self.verb = self.name_words[0]
        self.reads = self.verb in READ_VERBS
        self.id_params = [p for p in self.params if p == "id" or p.endswith("_id")]
        self.id_param = self.id_params[0] if self.id_params else None

    def id_pattern(self, param=None):
        """A regex for this tool's ids (or one parameter's), from the examples
        its descriptions give."""
        if param is not None:
            texts = [str(self.params.get(param, {}).get("description", ""))]
        else:
            texts = [self.description] + [str(v.get("description", "")) for v in self.params.values()]
        for text in texts:
            for example in re.findall(r"'([^'\s]+)'", text):
                if any(c.isdigit() for c in example):
                    shape = ""
                    for c in example:
                        if c.isdigit():
                            shape += r"\d"
                        elif c.isalpha():
                            shape += re.escape(c)
                        else:
                            shape += re.escape(c) + "?"
                    return re.compile(r"(?<![\w#])" + shape + r"(?!\w)", re.IGNORECASE), example
        if param is not None:
            return None, None
        return re.compile(r"(?<![\w#])#?[A-Za-z]*-?\d{3,}[A-Za-z0-9-]*(?!\w)"), None

    def thing(self):
        """What the tool's records are called (`order` for order_id)."""
        if self.id_param and self.id_param != "id":
            return self.id_param[: -len("_id")].replace("_", " ")
        return self.name_words[-1].rstrip("s") if len(self.name_words) > 1 else "record"


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
        everything they said; None when nothing fits."""
        return self.intent_in(self.opening) or self.intent_in(self.user_text)

    def intent_in(self, said):
        """A write tool whose verb the words use, else the read tool they fit
        best; None when nothing fits. The tool that identifies the person is
        never the intent."""
        text = " " + said.lower() + " "
        # "an update on my order" asks for news, not for a change.
        text = re.sub(r"\bupdates? on\b", "news on", text)
        said_words = set(words(text))
        auth = self.identify_tool()
        candidates = [t for t in self.tools if t is not auth]
        def nouns_read(word):
            # `list_transfers` reads transfers: "my transfer" names one.
            return any(t.reads and any(w.rstrip("s") == word for w in t.name_words[1:]) for t in candidates)

        best, best_score = None, 0
        for t in candidates:
            if t.reads:
                continue
            cues = SYNONYMS.get(t.verb, [t.verb])
            # Whole words: "unfreeze" is not "freeze"; "my transfer" names a
            # thing, not the act.
            def used(c):
                # A typo that swaps letters ("reufnd") still names the verb.
                if " " not in c.strip() and len(c.strip()) >= 5 and any(
                        w != c.strip() and len(w) == len(c.strip()) and w[0] == c[0]
                        and sorted(w) == sorted(c.strip()) for w in said_words):
                    return True
                for m in re.finditer(r"\b" + re.escape(c.strip()) + r"\b", text):
                    before = text[: m.start()].split()[-1:] 
                    if (c.strip() == t.verb and before and before[0] in ("my", "the", "a", "your", "this", "that")
                            and nouns_read(c.strip())):
                        continue
                    return True
                return False
            if not any(used(c) for c in cues):
                continue
            score = 3 + sum(1 for w in t.name_words[1:] if w in said_words)
            score += sum(1 for p in t.params if p not in FREE_TEXT and p != t.id_param
                         and any(w in said_words for w in p.split("_")))
            if score > best_score:
                best, best_score = t, score
        if best:
            return best
        if not any(c in text for c in READ_CUES) and not self.ids_in(said):
            return None
        email = EMAIL.search(said)
        for t in candidates:
            if t.reads and "email" in t.params and email and len(self.ids_in(said)) != 1:
                return t
        readers = [t for t in candidates if t.reads and t.id_param]
        if not readers:
            return None
        known = self.known_ids()

        def fit(t):
            # Name words the person used: the record's own noun a little,
            # other nouns (`balance`, `transfers`) more; an id of its kind in
            # the words, or one already known, makes it answerable.
            score = 0.0
            for w in t.name_words[1:]:
                if w in said_words or w.rstrip("s") in said_words:
                    score += 2 if w.rstrip("s") == entity(t.id_param) else 3
            if self.ids_for(t.id_param, said):
                score += 3
            elif t.id_param in known and not self.ids_in(said):
                score += 1
            return score
        return max(readers, key=fit)

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
        return re.compile(r"(?<![\w#])#?[A-Za-z]*-?\d{3,}[A-Za-z0-9-]*(?!\w)"), None

    def ids_for(self, param, text):
        """Ids of a parameter's kind in some words, in order, with where each starts."""
        pattern, example = self.pattern_for(param)
        found = []
        for m in pattern.finditer(text or ""):
            value = normalise_id(m.group(0), example)
            if value not in [v for v, _ in found]:
                found.append((value, m.start()))
        return found

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

    def value_for(self, param, tool):
        """A value the person gave for a parameter, from their words."""
        spec = tool.params.get(param, {})
        if "email" in param:
            m = EMAIL.search(self.user_text)
            return m.group(0) if m else None
        if param in FREE_TEXT:
            m = re.search(r"because ([^.?!]+)", self.user_text, re.IGNORECASE)
            return m.group(1).strip() if m else None
        names = [w for w in param.split("_") if w not in ("new", "the")]
        number = spec.get("type") in ("number", "integer")
        end = (r"(?:,\s*(?:if|please|thanks|thank|not)\b|\s+and\s+(?:the\s+)?[\w ]{1,30}?\s+(?:is|to)\b"
               r"|[?!]|\.(?:\s|$)|$)")
        found = None
        for text in reversed(self.users):
            for name in names:
                m = re.search(r"\b" + re.escape(name) + r"\b(?:\s+in\s+\w+)?\s*(?:to|is|as|:)\s+(.+?)" + end,
                              text, re.IGNORECASE)
                if m:
                    found = m.group(1).strip()
                    break
            if found is None:
                m = re.search(r"the new " + re.escape(names[-1]) + r" is (.+?)" + end, text, re.IGNORECASE)
                if m:
                    found = m.group(1).strip()
            if found is not None:
                break
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
        """The tool a policy sentence says identifies the person first
        ("Always identify the customer by email with `find_customer_by_email`")."""
        for sentence in re.split(r"(?<=[.!?])\s+", self.system):
            s = sentence.lower()
            if any(w in s for w in ("identify", "authenticate", "verify")):
                for t in self.tools:
                    if t.name in sentence and "email" in t.params:
                        return t
        return None


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
