"""What the calibration agents share: reading any spec's tools from the
request, the conversation so far, the facts a person gave, and the policy
as the conduct checks read it.

Standard library only. Nothing here knows a particular spec: tools are
classified by their names and descriptions (a read verb such as get, find,
list, check; anything else changes the world). A parameter is an
identifier by its structure (`is_id_param`): a name ending in `_id`,
`_number`, `_code`, `_no` or `_ref`, a phone number,
or a description whose noun is a number, id, code, reference or locator
("Meter serial number, e.g. ..."), never a choice (an enum), an amount, an
email, a name or a postal code. Ids in a person's words are found as people
write them (`IdKind`): by the shape of the examples the descriptions give
('#W1001' -> `#W` and four digits; 'KDZRTA' -> six capitals; 'crd_7hk2lm' ->
`crd_` and six letters or digits), then by that shape with any letters and
a digit more or less, named by their kind ("booking mwxzqa", "conf
71830977"), without their prefix where named ("employee 100482" ->
EMP-100482), and phone numbers with spaces, dashes, dots, brackets or a
leading country code; each written back as the examples write it.

With SPARRING_POLICY_READING (set by `sparring calibrate` only) the agents
read the policy as the conduct checks do (`Reading`): who identifies the
person and with which tools, what needs a yes, what comes first, what is
never shown, when to hand off and the bounds; without it they read the
system prompt with their own heuristics.
"""

import json
import os
import re
import sys

READ_VERBS = {"get", "find", "list", "search", "lookup", "look", "check", "show",
              "fetch", "read", "view", "query", "track", "describe", "retrieve"}
FREE_TEXT = {"reason", "note", "notes", "comment", "message", "description", "summary"}
# Nouns for the person a record belongs to (`find_user_id_by_email` finds one).
# The general English list of sparring_types::words::PERSON_NOUNS (one list
# for the world, the policy reader and these agents), and `profile`.
OWNER_WORDS = {"customer", "user", "owner", "client", "member", "patient", "person", "tenant", "guest",
               "passenger", "traveler", "traveller", "caller", "subscriber", "policyholder", "student",
               "renter", "borrower", "buyer", "shopper", "applicant", "resident", "profile"}
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
    "open": ["open", "new", "create", "start", "set up", "raise"],
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
# A date with slashes or dots ("07/22/1988", "19.05.2004").
DATE_SLASH = re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b")
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


# The endings of a parameter that names a record by its identifier
# (`order_id`, `policy_number`, `plan_code`): sparring_types::keys::ID_SUFFIXES.
ID_ENDINGS = ("_id", "_number", "_code", "_no", "_ref")
# The words of a parameter that holds a phone number (a line, a person).
PHONE_WORDS = {"phone", "mobile", "cell", "telephone", "tel"}
# Codes and numbers that name no record: a place's, a currency's, a secret.
NOT_RECORDS = {"zip", "postal", "post", "postcode", "country", "currency", "language", "area",
               "state", "region", "province", "dial", "security", "verification", "otp",
               "pin", "cvv", "cvc", "status", "type", "reason", "error", "tax"}
# The last word of a description that says its parameter identifies a
# record ("Meter serial number", "The bill reference", "Customer id").
ID_NOUNS = {"number", "id", "identifier", "reference", "ref", "code", "locator", "serial"}
# A description that gives an id's size ("8-digit", "6-letter").
SIZED = re.compile(r"\b(\d{1,2})[- ](digit|letter|character|char)s?\b", re.IGNORECASE)


def is_id_param(name, spec):
    """Whether a parameter identifies a record by its structure: its name's
    ending (`_id`, `_number`, `_code`, `_no`, `_ref`), a phone number
    (`phone_number`, or "The mobile number" described), or a description whose noun identifies ("Meter
    serial number", "The 19-digit number on the card"); never a choice of
    the schema's (an enum), a number, a place's or a secret's code."""
    spec = spec if isinstance(spec, dict) else {}
    if spec.get("enum") or spec.get("type") in ("number", "boolean", "array", "object"):
        return False
    parts = name.lower().split("_")
    if spec.get("type") == "integer" and not name.endswith("_id"):
        return False
    if set(parts) & NOT_RECORDS or "email" in parts or parts[-1] in ("date", "name", "amount"):
        return False
    if name == "id" or name.lower().endswith(ID_ENDINGS) or set(parts) & PHONE_WORDS or is_phone(name, spec):
        return True
    text = str(spec.get("description") or "")
    head = re.split(r"[,.(;:]|\s+(?:such as|e\.g\.|for example)\b", text, maxsplit=1, flags=re.IGNORECASE)[0]
    last = (words(head)[-1:] or [""])[0]
    # "The 19-digit number printed on the new SIM card": a sized number.
    sized = re.search(r"\b\d{1,2}[- ](?:digit|letter|character)s?\s+(?:[a-z]+\s+)?(?:number|code|id|reference)\b",
                      text, re.IGNORECASE)
    return last in ID_NOUNS or bool(sized)


def is_phone(name, spec=None):
    """Whether a parameter's name says it holds a phone number (`phone_number`),
    or its description's noun does ("The mobile number as the customer gives it")."""
    if set(name.lower().split("_")) & PHONE_WORDS:
        return True
    text = str((spec or {}).get("description") or "") if isinstance(spec, dict) else ""
    return bool(re.match(r"\s*(?:the\s+|a\s+)?(?:[\w']+\s+)?(?:phone|mobile|cell|telephone)\s+number\b", text, re.I))


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
        # with its properties sorted by name. Who the person is (their
        # email, phone, name) is no record of theirs.
        order = {p: i for i, p in enumerate(self.required)}
        self.id_params = sorted((p for p, v in self.params.items()
                                 if p not in IDENTITY_PARAMS and is_id_param(p, v)),
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

    def kind(self, param):
        """How this tool's ids of one parameter are written (`IdKind`)."""
        spec = self.params.get(param) or {}
        return IdKind(param, spec, id_examples(str(spec.get("description") or "")))

    def thing(self):
        """What the tool's records are called (`order` for order_id)."""
        if self.id_param and self.id_param != "id":
            return entity(self.id_param).replace("_", " ")
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


# Common English words a code made only of letters is not ("please"):
# the words people put after a record's name.
COMMON_WORDS = {"is", "the", "my", "and", "or", "to", "for", "on", "in", "at", "of", "it", "an", "no",
                "its", "was", "are", "be", "by", "me", "we", "our", "your", "id", "number", "please", "thanks", "thank", "today", "again", "number", "details", "status", "about",
                "there", "here", "which", "where", "should", "would", "could", "before", "after",
                "asked", "tomorrow", "yesterday", "anymore", "change", "cancel", "update", "online",
                "instead", "because", "though", "really", "urgent", "thing", "things",
                "already", "sorted", "happen", "happened", "myself", "yourself", "little",
                "someone", "somebody", "nothing", "anything", "something", "everything", "people"}
# An id of no known shape: letters, maybe a dash, then three digits or more.
ANY_ID = re.compile(r"(?<![\w#])#?[A-Za-z]*-?\d{3,}[A-Za-z0-9-]*(?!\w)")
# A phone number as people write it: a leading + and country code, spaces,
# dashes, dots or brackets between the groups; 7 to 15 digits.
PHONE = re.compile(r"(?<![\w+#/-])(\+?\(?\d(?:[\d ().-]{5,18})\d)(?![\w-])")


def id_examples(text):
    """The examples of ids a description gives: quoted ('KDZRTA', "#W1001",
    `P-1`) or after "e.g." / "such as" / "for example" / "like"; only those
    that look like ids (a digit, or capitals only), not dates or words."""
    found = re.findall(r"'([^'\n]{2,30})'|\"([^\"\n]{2,30})\"|`([^`\n]{2,30})`", text)
    found = [a or b or c for a, b, c in found]
    found += re.findall(r"\b(?:e\.g\.|such as|for example|like)\s+([#A-Za-z0-9][\w#/.-]*\w)", text)
    out = []
    for e in found:
        e = e.strip()
        if DATE.fullmatch(e) or " " in e and not re.fullmatch(r"[+\d ()-]+", e):
            continue
        if any(c.isdigit() for c in e) or (e.isalpha() and e.isupper() and len(e) >= 4):
            if e not in out:
                out.append(e)
    return out


def tokens(example):
    """An example cut into runs of letters (L), digits (D) and anything
    else (S): 'HO3-7741' -> L HO, D 3, S -, D 7741."""
    return [(("L" if m.group(0)[0].isalpha() else "D" if m.group(0)[0].isdigit() else "S"), m.group(0))
            for m in re.finditer(r"[A-Za-z]+|\d+|[^A-Za-z\d]+", example)]


def id_shapes(example, several):
    """The regex sources of ids shaped like one example, strictest first:
    (source, general, labelled_only). Words joined by underscores before
    digits (`sara_doe_496`) are names: any words, any digits, unless several
    examples list the words that may appear. Capitals alone (`KDZRTA`) are
    any capitals of that length, any letters where named. Otherwise a
    segment that mixes letters and digits after the first (`crd_7hk2lm`), or
    of three runs or more (`ZFA04Y`), is any such code of its length;
    letters before the digits are kept (`#W1001`, `EMP-100482`); separators
    may be left out. The general shape takes any letters and a digit more
    or less; the bare digits of a prefixed id are one where named."""
    if re.fullmatch(r"[a-z]+(?:_[a-z]+)*_\d+", example):
        head = example.rsplit("_", 1)[0]
        if several:
            # The words the examples list first; any words as general, since
            # examples ("such as") never list every kind.
            return [(re.escape(head) + r"_\d+", False, False),
                    (r"[a-z]+(?:_[a-z]+)*_\d+", True, False)]
        return [(r"[a-z]+(?:_[a-z]+){%d}_\d+" % head.count("_"), True, False)]
    if example.isalpha():
        n = len(example)
        cls = "[A-Z]" if example.isupper() else "[a-z]"
        return [(r"%s{%d}" % (cls, n), False, False), (r"[A-Za-z]{%d}" % n, True, True)]
    runs = tokens(example)
    segments, current = [], []
    for kind, text in runs:
        if kind == "S":
            segments.append((current, text))
            current = []
        else:
            current.append((kind, text))
    segments.append((current, ""))
    strict, general = "", ""
    for i, (segment, sep) in enumerate(segments):
        text = "".join(t for _, t in segment)
        kinds = [k for k, _ in segment]
        if (len(kinds) >= 3 or (kinds[:1] == ["D"] and "L" in kinds)) and text:
            lower = text.lower() == text
            code = r"(?=[A-Za-z]*\d)[%s0-9]{%d}" % ("a-z" if lower else "A-Z", len(text))
            strict += code
            general += r"(?=[A-Za-z]*\d)[A-Za-z0-9]{%d}" % len(text)
        else:
            for kind, t in segment:
                n = len(t)
                if kind == "D":
                    strict += r"\d{%d}" % n
                    general += r"\d{%d,%d}" % (max(1, n - 1), n + 1)
                else:
                    strict += re.escape(t)
                    general += r"[A-Za-z]{%d,%d}" % (max(1, n - 2), n + 2)
        if sep:
            one = re.escape(sep.strip() or " ")
            strict += r"(?:%s|\s)?" % one if sep.strip() else r"[ .-]?"
            # The general shape keeps a separator where the example has one.
            general += r"[._/#-]" if sep.strip() else r"[ .-]?"
    shapes = [(strict, False, False), (general, True, False)]
    # EMP-100482 said as "employee 100482": its digits, where named.
    if runs and runs[0][0] == "L" and all(k != "L" for k, _ in runs[1:]):
        digits = "".join(t for k, t in runs if k == "D")
        shapes.append((r"\d{%d}" % len(digits), True, True))
    return shapes


class IdKind:
    """How one kind of id is written, read from a parameter: its examples'
    shapes (see `id_shapes`), a size its description gives ("8-digit"),
    whether it is a phone number; `find` reads such ids in words and
    `normalise` writes one as the examples do."""

    def __init__(self, param, spec, examples):
        self.param = param
        self.examples = examples
        self.example = examples[0] if examples else None
        self.phone = is_phone(param) or bool(
            self.example and re.fullmatch(r"\+?[\d ()-]{7,}", self.example)
            and re.search(r"\b(?:phone|mobile|cell)\b", str(spec.get("description") or ""), re.I))
        self.tiers = []  # (compiled regex, general, labelled_only)
        sources = []
        for e in examples:
            for i, shape in enumerate(id_shapes(e, len(examples) > 1)):
                sources.append((i, shape))
        for tier in sorted({i for i, _ in sources}):
            for general, labelled in sorted({(g, lab) for i, (_, g, lab) in sources if i == tier}):
                src = "|".join(dict.fromkeys(s for i, (s, g, lab) in sources
                                             if i == tier and g == general and lab == labelled))
                flags = 0 if (self.example and self.example.isalpha() and not general) else re.IGNORECASE
                # Not a piece of a longer id ("5931-200845" of BL-5931-200845).
                self.tiers.append((re.compile(r"(?<![\w#/-])(?:" + src + r")(?![\w])(?![-/]\w)", flags),
                                   general, labelled))
        sized = SIZED.search(str(spec.get("description") or ""))
        if sized and not examples:
            n, what = int(sized.group(1)), sized.group(2).lower()
            cls = r"\d" if what == "digit" else "[A-Za-z]" if what == "letter" else "[A-Za-z0-9]"
            self.tiers.append((re.compile(r"(?<![\w#/-])%s{%d}(?![\w])(?![-/]\w)" % (cls, n)), False, what == "letter"))
        self.known = bool(self.tiers) or self.phone
        if not self.tiers:
            self.tiers.append((ANY_ID, True, False))

    @property
    def generalized(self):
        return all(g for _, g, _ in self.tiers)

    def strict(self, value):
        """Whether a value fits this kind's literal shape."""
        return any(not g and not lab and r.fullmatch(value) for r, g, lab in self.tiers)

    def find(self, text, named=None):
        """The ids of this kind in some words, in order, with where each
        starts and whether only a general shape found it: the strictest
        tier that finds any; a tier for ids only where named counts where
        `named` (a regex for the kind's name and an id after it) finds it."""
        text = text or ""
        if self.phone:
            # A phone number however grouped; the examples' shapes add nothing.
            return [(self.normalise(m.group(1).strip()), m.start(1), False, m.group(1)) for m in PHONE.finditer(text)
                    if 7 <= len(re.sub(r"\D", "", m.group(1))) <= 15 and not DATE.search(m.group(1))]
        spans = [] if named is None else [(m.start(1), m.end(1)) for m in named.finditer(text)]
        # The strict shapes' ids, then the general shapes' ids elsewhere in
        # the words (`BUS-2026-00451` beside `BLD-2025-00177`); ids only
        # where named count when nothing else is found.
        found = []
        for only_named in (False, True):
            if found:
                break
            for regex, general, labelled in self.tiers:
                if labelled != only_named:
                    continue
                for m in regex.finditer(text):
                    if DATE.fullmatch(m.group(0)) or DATE_SLASH.fullmatch(m.group(0)):
                        continue
                    if labelled and not any(a <= m.start() and m.end() <= b for a, b in spans):
                        continue
                    if any(at <= m.start() < at + len(raw) or m.start() <= at < m.end()
                           for _, at, _, raw in found):
                        continue
                    found.append((self.normalise(m.group(0)), m.start(), general, m.group(0)))
        found.sort(key=lambda f: f[1])
        return found

    def blank(self, text):
        """Words with this kind's ids (by its shapes that need no name)
        blanked out."""
        for regex, _, labelled in self.tiers:
            if not labelled and regex is not ANY_ID:
                text = regex.sub(" ", text)
        return text

    def normalise(self, found):
        """An id as the tool writes it: a phone number in the example's
        grouping (a leading country code made the example's 0); otherwise
        the example's case, and its separators where the letters and digits
        are as many; the example's prefix put back on bare digits."""
        example = self.example
        if example is None:
            return found
        if self.phone:
            return normalise_phone(found, example)
        if re.fullmatch(r"[a-z]+(?:_[a-z]+)*_\d+", example):
            return found
        alnum = [c for c in found if c.isalnum()]
        slots = [c for c in example if c.isalnum()]
        upper = any(c.isupper() for c in example)
        lower = not upper and any(c.islower() for c in example)
        fix = (lambda c: c.upper()) if upper else (lambda c: c.lower()) if lower else (lambda c: c)
        if len(alnum) == len(slots):
            out, i = "", 0
            for c in example:
                if c.isalnum():
                    out += fix(alnum[i])
                    i += 1
                else:
                    out += c
            # A '#' the person left out is the example's; one they wrote
            # where the example has none is theirs to drop.
            return out
        runs = tokens(example)
        if found.isdigit() and runs and runs[0][0] == "L":
            digits = "".join(t for k, t in runs if k == "D")
            if len(found) == len(digits):
                out, i = "", 0
                for c in example:
                    if c.isdigit():
                        out += found[i]
                        i += 1
                    else:
                        out += c
                return out
        return "".join(fix(c) for c in found)


def normalise_phone(found, example):
    """A phone number in the example's grouping ('07700 900123'): its
    digits laid into the example's where they are as many, a leading
    country code (`+44 7700 …`) made the example's leading 0; else as given."""
    digits = re.sub(r"\D", "", found)
    slots = re.sub(r"\D", "", example)
    plus = found.strip().startswith("+") or found.strip().startswith("00")
    if found.strip().startswith("00"):
        digits = digits[2:]
    if plus and not example.strip().startswith("+") and slots.startswith("0"):
        for cc in (1, 2, 3):
            if len(digits) - cc + 1 == len(slots):
                digits = "0" + digits[cc:]
                break
    if example.strip().startswith("+") and not plus and digits.startswith("0"):
        return found
    # Grouped by the person already ("0161 496 0277"): as given.
    if not plus and re.search(r"\d[\s.()-]+\d", found.strip()):
        return found.strip()
    if len(digits) != len(slots):
        return found
    out, i = "", 0
    for c in example:
        if c.isdigit():
            out += digits[i]
            i += 1
        elif c != "+" or plus:
            out += c
    return out


def entity(param):
    """The kind of record an id parameter names (`from_account_id` ->
    `account`, `policy_number` -> `policy`, `record_locator` -> `record`)."""
    name = param
    for ending in ID_ENDINGS:
        if name.endswith(ending) and len(name) > len(ending):
            name = name[: -len(ending)].rstrip("_")
            break
    for prefix in ROLE_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def role(param):
    return next((p for p in ROLE_PREFIXES if param.startswith(p)), None)


def id_noun(param, tool=None):
    """What a person calls an id of a parameter: `order_id` -> "order
    number", `policy_number` -> "policy number", `record_locator` ->
    "record locator", `msisdn` -> "mobile number" (its description's noun),
    `member_id` of a description "Member ID …" -> "member ID"."""
    spec = (tool.params.get(param) if tool is not None else None) or {}
    bare = param
    described = re.split(r"[,.(;:]|\s+(?:such as|e\.g\.|for example|as the|from the|printed|of the)\b",
                         str(spec.get("description") or ""), maxsplit=1, flags=re.IGNORECASE)[0]
    noun = [w for w in described.split() if w.lower() not in ("the", "a", "an", "your", "their")
            and not w.endswith("'s") and not SIZED.fullmatch(w)]
    noun = [w for w in noun if not re.fullmatch(r"\d+-\w+", w)]
    if is_phone(bare) and 1 <= len(noun) <= 3 and all(w.isalpha() for w in noun):
        return " ".join(w.lower() for w in noun)
    if bare.endswith("_id") or bare == "id":
        kind = bare[: -len("_id")].replace("_", " ") if bare != "id" else "record"
        return kind + " number"
    said = bare.replace("_", " ")
    said = re.sub(r"\bno\b|\bnum\b", "number", said)
    return re.sub(r"\bref\b", "reference", said)


class Conversation:
    def __init__(self, request):
        self.messages = request["messages"]
        self._kinds = {}
        self._labels = {}
        self._vocabulary = None
        self.reading = READING
        self.tools = [Tool(t) for t in request.get("tools") or []]
        self.system = " ".join(m.get("content") or "" for m in self.messages if m["role"] == "system")
        self.users = [m.get("content") or "" for m in self.messages if m["role"] == "user"]
        self.opening = self.users[0] if self.users else ""
        self.user_text = " ".join(self.users)
        self.last_user = self.users[-1] if self.users else ""
        self.agent_texts = [m.get("content") or "" for m in self.messages
                            if m["role"] == "assistant" and m.get("content")]
        # Each user message with the agent's words just before it (what it
        # may be answering).
        self.pairs, before = [], ""
        for m in self.messages:
            if m["role"] == "assistant" and m.get("content"):
                before = m["content"]
            elif m["role"] == "user":
                self.pairs.append((before, m.get("content") or ""))
                before = ""
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
                # The asking verb, then whom, a few words on ("talk to a
                # nurse"); "I was transferred here from the billing team"
                # asks for no one.
                head = t.recipient.split()[0]
                cue = r"\b(?:" + "|".join(re.escape(h) for h in HANDOFF_CUES) + r")\b(?:\W+\w+){0,6}?\W+"
                if re.search(cue + re.escape(head) + r"s?\b", text):
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
                    # "set up" a new thing is no change of one; "prove me
                    # wrong" asks for nothing.
                    if c.strip() == "set" and text[m.end():].startswith(" up"):
                        continue
                    if c.strip() == "wrong" and text[:m.start()].endswith(" me "):
                        continue
                    before = text[: m.start()].split()[-1:] 
                    if (c.strip() == t.verb and before and before[0] in ("my", "the", "a", "your", "this", "that")
                            and nouns_read(c.strip())):
                        continue
                    # "my access request" names what `get_access_request`
                    # reads: a read tool's noun, not the verb `request`.
                    if before and any(t2.reads and (" " + " ".join(t2.name_words[1:]) + " ").find(
                            " " + before[0] + " " + c.strip() + " ") >= 0 for t2 in candidates):
                        continue
                    return True
                return False
            # "a new certificate": words that ask for something new name a
            # write tool whose noun they come with.
            # A tool whose own verb is used outranks one named this way ("a
            # new claim" is not "new evidence for my claim's appeal").
            noun_said = any(w.rstrip("s") in said_words for w in t.name_words[1:] if len(w) > 2)
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
        read_verb = any(t.reads and t.verb in said_words for t in candidates)
        if not any(c in text for c in READ_CUES) and not self.ids_in(said) and not my_noun and not read_verb:
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
            # A list read is meant where its noun is said in the plural or
            # its verb is used; else a read of one record comes first.
            if t.verb in ("list", "search") and t.verb not in said_words and not any(
                    w.endswith("s") and w in said_words for w in t.name_words[1:]):
                score -= 0.5
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
        best = max(readers, key=lambda t: (fit(t), -first_said(t)))
        # Nothing of it said, while a tool that identifies the person was
        # left out: that one may be meant ("my profile BYR-30025").
        if fit(best) <= 0 and auths:
            return None
        return best

    def known_ids(self):
        """Ids the tools' answers gave, by parameter name (`customer_id` from
        the identifying lookup), first seen first."""
        known = {}
        for _, _, result in self.calls:
            value = result.get("result") if result.get("ok") else None
            if isinstance(value, dict):
                for k, v in value.items():
                    if (k == "id" or is_id_param(k, {})) and isinstance(v, (str, int)):
                        known.setdefault(k, v)
        return known

    @property
    def vocabulary(self):
        """The words of the desk's own text: its policy, its tools' names,
        descriptions and parameters."""
        if self._vocabulary is None:
            text = self.system + " " + " ".join(
                t.name + " " + t.description + " " + json.dumps(t.params) for t in self.tools)
            text = re.sub(r"'[^'\s]+'", " ", text)
            self._vocabulary = set(re.findall(r"[a-z]+", text.lower().replace("_", " ")))
        return self._vocabulary

    def kind_for(self, param):
        """How ids of a parameter are written (`IdKind`): from the examples
        of every parameter naming the same kind of record, its own first."""
        cached = self._kinds.get(param)
        if cached is not None:
            return cached
        same = [(t, p) for t in self.tools for p in t.params
                if p == param or (p in t.id_params and entity(p) == entity(param))]
        same.sort(key=lambda tp: tp[1] != param)
        examples, spec = [], {}
        for t, p in same:
            for e in id_examples(str((t.params.get(p) or {}).get("description") or "")):
                if e not in examples:
                    examples.append(e)
            if p == param and not spec:
                spec = t.params.get(p) or {}
        kind = IdKind(param, spec, examples)
        self._kinds[param] = kind
        return kind

    def record_noun(self, param):
        """What the records of an id parameter are called, its role kept:
        `from_account_id` -> from account; an id whose stem is no tool's
        noun (`record_locator`, `confirmation_number`, `msisdn`) by the
        noun of the read that takes it (booking, reservation, line), else
        by its own words."""
        base = entity(param)
        lead = role(param) or ""
        nouns = {w.rstrip("s") for t in self.tools for w in t.name_words[1:]}
        if base == "id":
            return "record"
        if base.split("_")[-1] in nouns:
            return (lead + base).replace("_", " ")
        for t in self.tools:
            if t.reads and param in t.params and len(t.name_words) > 1:
                noun = t.name_words[-1].rstrip("s")
                if len(noun) > 3 and noun not in ("detail", "info", "status", "record"):
                    return (lead + noun).replace("_", " ")
        return id_noun(param, next((t for t in self.tools if param in t.params), None))

    def claimed_by_other(self, param, value):
        """Whether another kind of id's literal shape fits a value
        (`credit_card_1000001` is a payment method, not a user id)."""
        for t in self.tools:
            for p in t.id_params:
                if entity(p) == entity(param):
                    continue
                if self.kind_for(p).strict(value):
                    return True
        return False

    def ids_for(self, param, text, answered=False):
        """Ids of a parameter's kind in some words, in order, with where each
        starts: by the kind's shapes (`IdKind.find`), where named also its
        looser ones ("booking mwxzqa", "employee 100482"), else any id-like
        word after its name ("the payment method is paypal_9497703", "my ID
        is sara_doe_496"). `answered`: the words answer a question asking
        for this id, so all of them name it ("It's KDZRTA.")."""
        if text is self.user_text and not answered:
            # Each message, an answer to a question for this id read as one.
            found = []
            for before, said in self.pairs:
                for value, at in self.ids_in_words(param, said, self.asks_for_id(before, param)):
                    if value not in [v for v, _ in found]:
                        found.append((value, at))
            return found
        return self.ids_in_words(param, text, answered)

    def ids_in_words(self, param, text, answered):
        """`ids_for` over one text."""
        kind = self.kind_for(param)
        named = re.compile(r"(.+)", re.S) if answered else self.labelled(param)
        found = []
        for value, at, general, raw in kind.find(text, named):
            if (general or not kind.known) and (self.claimed_by_other(param, raw)
                                                or self.claimed_by_other(param, value)):
                continue
            lead = re.match(r"[A-Za-z]+", raw)
            if general and lead and (lead.group(0).lower() in COMMON_WORDS or (
                    value.isalpha() and lead.group(0).lower() in self.vocabulary)):
                # A word of the desk's own ("record") or of plain English is no code.
                continue
            if value not in [v for v, _ in found]:
                found.append((value, at))
        if not found and answered:
            # The answer to a question for it, whatever its shape ("It's
            # MWXZQA0."): its first word that looks like an id.
            for m in re.finditer(r"(?<![\w#])#?[A-Za-z0-9][\w-]*", text or ""):
                word = m.group(0)
                if (any(ch.isdigit() for ch in word) or (word.isupper() and len(word) >= 4)) \
                        and not DATE.fullmatch(word) and word.lower() not in COMMON_WORDS \
                        and not self.claimed_by_other(param, word):
                    found.append((kind.normalise(word) if len(word) == len(kind.example or "") else word,
                                  m.start()))
                    break
        if not found:
            for m in self.labelled(param).finditer(text or ""):
                value = kind.normalise(m.group(1))
                if any(ch.isdigit() for ch in value) and not self.claimed_by_other(param, value) \
                        and not DATE.fullmatch(value) and value not in [v for v, _ in found]:
                    found.append((value, m.start(1)))
        return found

    def labelled(self, param):
        """A regex for an id named by its kind, the id after it: "the
        payment method is X", "reservation ID: X", "booking mwxzqa", "conf
        71830977" (a long name's first four letters stand for it); the
        person's own id also as "my ID is X"."""
        cached = self._labels.get(param)
        if cached is not None:
            return cached
        names = set()
        kind = entity(param).replace("_", " ")
        noun = id_noun(param, next((t for t in self.tools if param in t.params), None))
        for phrase in (kind, noun, param.replace("_", " ")):
            phrase = re.sub(r"\b(?:id|number|code|no|ref|reference)\b", "", phrase).strip()
            if phrase and phrase != "record":
                names.add(re.escape(phrase).replace(r"\ ", r"\s+"))
            for w in phrase.split():
                if len(w) >= 6:
                    names.add(re.escape(w[:4]) + r"[a-z]*\.?")
        # The record a tool of this id reads ("my booking KDZRTA" for a
        # `record_locator` that `retrieve_booking` takes).
        for t in self.tools:
            if param in t.params and t.reads and len(t.name_words) > 1:
                noun_word = t.name_words[-1].rstrip("s")
                if len(noun_word) > 3 and noun_word not in ("detail", "info", "status"):
                    names.add(re.escape(noun_word) + "s?")
        if kind in OWNER_WORDS:
            names.add(r"my")
        regex = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")"
                           r"(?:\s+(?:id|number|code|no\.?|#|ref|reference|locator))?"
                           r"\s*(?:is|was|:|=|#|-)?\s*(?:#\s*)?(#?[A-Za-z0-9][\w-]*)", re.IGNORECASE)
        self._labels[param] = regex
        return regex

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
            if picked is None:
                # The bare answer to a question listing the options ("500").
                answer = self.answer_to(param.replace("_", " ") + ":")
                plain = re.sub(r"[\s_-]+", " ", (answer or "").lower()).strip()
                picked = next((o for o in choices if re.sub(r"[\s_-]+", " ", o.lower()) == plain), None)
            if picked is not None or param in FREE_TEXT or spec.get("enum"):
                return coerce(picked, spec)
        if param in FREE_TEXT:
            m = (re.search(r"because ([^.?!]+)", self.user_text, re.IGNORECASE)
                 or re.search(r"\breason(?: is|:)\s+([^.?!)]+)", self.user_text, re.IGNORECASE))
            return m.group(1).strip() if m else None
        # A word another parameter shares ("date" of `start_date` and
        # `end_date`) names neither.
        shared = {w for p in tool.params if p != param for w in p.split("_")}
        parts = [w for w in param.split("_") if w not in ("new", "the")]
        names = [re.escape(w) for w in parts if w not in shared or len(parts) == 1]
        if len(parts) > 1:
            names.insert(0, r"\s+".join(re.escape(w) for w in parts))
        # The description's noun ("The second line of the address, such as
        # …" -> "second line of (the) address"), as a person may say it.
        noun = re.split(r"[,.(]| such as", str(spec.get("description") or ""))[0].split()
        noun = noun[1:] if noun and noun[0].lower() in ("the", "a", "an") else noun
        if 1 < len(noun) <= 6:
            names = [r"\s+".join("(?:the\\s+)?" if w.lower() == "the" else re.escape(w) for w in noun)
                     .replace("(?:the\\s+)?\\s+", "(?:the\\s+)?")] + names
        number = spec.get("type") in ("number", "integer")
        end = (r"(?:,\s*(?:if|please|thanks|thank|not)\b|\s+and\s+(?:the\s+)?[\w -]{1,60}?\s+(?:is|to)\b"
               r"|\s+(?:for|on)\s+(?:my|the|our|this)\b"
               r"|,\s*(?:the\s+|my\s+)?[\w -]{1,60}?\s+is\b"
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
        if spec.get("format") != "date-time" and is_date_param(param, spec):
            # A date in any common form, as the schema writes it: the one
            # its name gives, else the only date the person gave.
            if found:
                got = dates_in(found, self.day_first)
                if got:
                    return got[0][0]
            dated = [p for p, v in tool.params.items() if is_date_param(p, v)]
            if len(dated) == 1:
                birth = "birth" in param or param == "dob"
                for text in reversed(self.users):
                    # Not a date the words say is a birthday.
                    got = [(d, at) for d, at in dates_in(text, self.day_first) if birth or not re.search(
                        r"\b(?:birth|dob|born|birthday)\b[^.?!]{0,25}$", text[:at], re.IGNORECASE)]
                    if len(got) == 1:
                        return got[0][0]
            return found
        if spec.get("format") == "date-time":
            # "2026-12-16 at 11:00" as the schema writes it: 2026-12-16T11:00:00.
            for text in ([found] if found else []) + list(reversed(self.users)):
                m = DATE_TIME.search(text)
                if m:
                    return "%sT%02d:%s:%s" % (m.group(1), int(m.group(2)), m.group(3), m.group(4) or "00")
            return None
        if number:
            # A number standing alone, not the digits of an id (`A-2002`):
            # where the words name the parameter, in the answer to a
            # question naming it, or as money where it is an amount.
            standalone = r"(?<![\w#-])[$£€]?(\d+(?:,\d{3})*(?:\.\d+)?)(?![\w-])"
            texts = [found] if found else []
            answer = self.answer_to(param.replace("_", " "))
            texts += [answer] if answer else []
            money = re.search(r"amount|price|total|fee|cost|credit|refund|payment|dollar|pound|euro|usd",
                              param + " " + str(spec.get("description") or ""), re.IGNORECASE)
            if money:
                texts += [m.group(0) for text in reversed(self.users)
                          for m in re.finditer(r"[$£€]\s?\d[\d,]*(?:\.\d+)?", text)]
            if not texts and len([p for p, v in tool.params.items()
                                  if (v or {}).get("type") in ("number", "integer")]) == 1 and money:
                texts = list(reversed(self.users))
            for text in texts:
                # Not a digit of a date, a phone number or an id.
                text = self.without_ids(text)
                m = re.search(standalone, text)
                if m:
                    value = float(m.group(1).replace(",", ""))
                    return value if spec.get("type") == "number" else int(value)
            return None
        return as_examples(found, spec)

    def without_ids(self, text):
        """Words with their dates, phone numbers and ids of the tools' kinds
        blanked out, so a number standing alone is none of them."""
        text = DATE.sub(" ", text or "")
        text = DATE_SLASH.sub(" ", text)
        for t in self.tools:
            for p in t.id_params:
                kind = self.kind_for(p)
                if kind.known:
                    text = kind.blank(text)
        for m in PHONE.finditer(text):
            if len(re.sub(r"\D", "", m.group(1))) >= 9:
                text = text.replace(m.group(1), " ")
        return text

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
        read that finds a person by what the sentence names. Named ones first.
        With the policy's reading, the tools its `authenticate_first` rules
        identify with, as the check reads them."""
        if self.reading is not None:
            names = [t.name for t in self.tools]
            return [t for t in (self.tool(n) for n in self.reading.via(names)) if t is not None]
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

    def identify_tool_params(self):
        """What the identifying tools take (`student_number`, `date_of_birth`)."""
        return [p for t in self.identify_tools() for p in t.required]

    def person_finders(self):
        """Reads that find a person by who they are (`find_user_id_by_email`,
        `find_user_id_by_name_zip`): no id parameter, only identity ones,
        and a person's noun in the name."""
        return [t for t in self.tools
                if t.reads and not t.id_params and t.params and set(t.params) <= IDENTITY_PARAMS
                and any(w in OWNER_WORDS for w in t.name_words[1:])]

    def identity_value(self, param, tool=None):
        """A value of an identity parameter the person gave: their email, a
        phone number (as the tool's examples write it), a date of birth in
        any common form, a name part ("my first name is Noah", "I'm Noah
        Patel", "last name Petrov", a signature), a zip code, an id of a
        record (`member_id`, `student_number`)."""
        if "email" in param:
            m = EMAIL.search(self.user_text)
            return m.group(0) if m else None
        spec = (tool.params.get(param) if tool is not None else None) or {}
        if is_phone(param, spec):
            return self.phone_value(param)
        if param in ("dob", "date_of_birth", "birth_date", "birthdate", "birthday") or (
                is_date_param(param, spec) and "birth" in str(spec.get("description") or "").lower()):
            return self.birth_date()
        if tool is not None and param in tool.id_params:
            for text in reversed(self.users):
                answered = self.answers(param, text)
                found = self.ids_for(param, text, answered)
                if found:
                    return found[0][0]
            return None
        label = param.replace("_", " ")
        # A whole name is two words ("my name is Maya Chen"); anything else one.
        value = r"([A-Za-z'-]+\s+[A-Za-z'-]+)" if param in ("name", "full_name") else r"([\w'-]+)"
        for text in reversed(self.users):
            m = re.search(r"\b" + re.escape(label) + r"(?: code)?\b\s*(?:is|:|,)?\s*" + value, text, re.IGNORECASE)
            if m and m.group(1).lower() not in ("is", "and", "the", "please"):
                return m.group(1).capitalize() if "name" in param and m.group(1).islower() else m.group(1)
        if param in ("zip", "zip_code", "postal_code"):
            m = re.search(r"\b(?:zip|postal|postcode)\b[^.?!\d]{0,20}(\d{5})\b", self.user_text, re.IGNORECASE)
            return m.group(1) if m else None
        if param == "last_name":
            m = re.search(r"\b(?:surname|family name|last name)\b\s*(?:is|:|,)?\s*([A-Za-z][A-Za-z'-]+)",
                          self.user_text, re.IGNORECASE)
            if m:
                return m.group(1).capitalize() if m.group(1).islower() else m.group(1)
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
            if param == "last_name":
                # "name is Tanaka", "Petrov here": one name is the last name.
                m = re.search(r"\b(?:my name is|name is|name's)\s+([A-Z][a-z'-]+)\b(?!\s+[A-Z])", self.user_text)
                if m:
                    return m.group(1)
        answer = self.answer_to(param.replace("_", " "))
        if answer is not None and "name" in param and re.fullmatch(r"[A-Za-z' -]+", answer):
            parts = [w.capitalize() if w.islower() else w for w in answer.split()]
            return " ".join(parts) if param in ("name", "full_name") else parts[-1 if param == "last_name" else 0]
        if tool is not None:
            return self.value_for(param, tool) or answer
        return answer

    def detail_value(self, detail):
        """A detail the person gave to identify themselves (`date_of_birth`,
        `zip_code`, `last_name`, `email`, `phone_number`)."""
        if detail == "date_of_birth":
            return self.birth_date()
        if detail == "phone_number":
            return self.phone_value(detail)
        return self.identity_value(detail)

    def answers(self, param, text):
        """Whether `text`, the last message, answers the agent's question
        for this id."""
        if text is not self.last_user or not self.pairs:
            return False
        return self.asks_for_id(self.pairs[-1][0], param)

    def asks_for_id(self, question, param):
        """Whether the agent's words ask for this id by its name: a question
        naming it with no id of it after the name ("Could you give me the
        record locator?", not "To look up record locator X, could you give
        me the last name?")."""
        tool = next((t for t in self.tools if param in t.params), None)
        noun = id_noun(param, tool).lower()
        for sentence in re.split(r"(?<=[.!?])\s+", question or ""):
            low = sentence.lower()
            if not sentence.rstrip().endswith("?") or noun not in low:
                continue
            after = sentence[low.index(noun) + len(noun):]
            if not re.search(r"\b[A-Z0-9#][A-Z0-9#_-]*\d[\w-]*|\b[A-Z]{4,}\b", after):
                return True
        return False

    def answer_to(self, label):
        """A short answer to the agent's question naming `label` ("could you
        give me the last name?" -> "Liu."): the words without "it's", "my
        … is", and the end's punctuation; the latest such answer."""
        for before, text in reversed(self.pairs):
            if "?" not in before or label.lower() not in before.lower():
                continue
            said = text.strip()
            said = re.sub(r"^(?:sure|yes|ok|okay)[,.!]?\s+", "", said, flags=re.IGNORECASE)
            said = re.sub(r"^(?:it's|it is|that's|that is|its|my [\w ]{1,30}? is|the [\w ]{1,30}? is)\s+", "",
                          said, flags=re.IGNORECASE)
            said = re.split(r"[.!?,;](?:\s|$)", said)[0].strip(" .!?,;")
            if said and len(said.split()) <= 6:
                return said
        return None

    def phone_value(self, param):
        """The phone number the person gave, as the examples write it: one
        named as a phone ("my mobile is …") first, else one of the examples'
        length, else the only one; None when several could be meant."""
        kind = self.kind_for(param)
        for text in reversed(self.users):
            found = kind.find(text)
            if not found:
                continue
            # Not an id another kind's shape claims (a 10-digit account number).
            found = [f for f in found if not self.claimed_by_other(param, f[3].strip())]
            if not found:
                continue
            cued = [v for v, at, _, _ in found
                    if re.search(r"\b(?:phone|mobile|cell|line|tel|telephone)\b[^.?!\d]{0,25}$",
                                 text[:at], re.IGNORECASE)]
            if cued:
                return cued[0]
            if kind.example:
                size = len(re.sub(r"\D", "", kind.example))
                sized = [v for v, _, _, _ in found if len(re.sub(r"\D", "", v)) == size]
                if sized:
                    return sized[0]
            if len(found) == 1:
                return found[0][0]
        return None

    def birth_date(self):
        """The person's date of birth in ISO form, from any common way of
        writing it, named as one ("DOB 07/22/1988", "born 19 May 2004");
        else the only date an answer to a question for it gives."""
        for text in reversed(self.users):
            for iso, at in dates_in(text, self.day_first):
                if re.search(r"\b(?:date of birth|birth ?date|dob|d\.o\.b\.?|birthday|born)\b[^.?!]{0,25}$",
                             text[:at], re.IGNORECASE):
                    return iso
        if self.agent_texts and re.search(r"birth|dob", self.agent_texts[-1], re.IGNORECASE):
            found = dates_in(self.last_user, self.day_first)
            if len(found) == 1:
                return found[0][0]
        return None

    @property
    def day_first(self):
        """Whether a date like 04/05/2006 puts the day first: as the spec
        writes its dates ("DD/MM/YYYY"), else where its money is in pounds
        or euros (`£`, `€`), else month first."""
        text = self.system + " " + " ".join(t.description + " " + json.dumps(t.params) for t in self.tools)
        if re.search(r"\bDD[/.-]MM\b", text, re.IGNORECASE):
            return True
        if re.search(r"\bMM[/.-]DD\b", text, re.IGNORECASE):
            return False
        return "£" in text or "€" in text


MONTHS = {m: i + 1 for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july",
                                          "august", "september", "october", "november", "december"])}
MONTHS.update({m[:3]: n for m, n in list(MONTHS.items())})
MONTHS["sept"] = 9
MONTH = r"(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"


def dates_in(text, day_first=False):
    """Every date in some words as (YYYY-MM-DD, where it starts): 2004-05-19,
    05/19/2004 or 19/05/2004 (the day first where `day_first` or the first
    number is over 12), 19 May 2004, May 19, 2004; two-digit years in this
    century up to 30, else the last."""
    found = []

    def add(y, m, d, at):
        y, m, d = int(y), int(m), int(d)
        if y < 100:
            y += 2000 if y <= 30 else 1900
        if 1 <= m <= 12 and 1 <= d <= 31 and 1900 <= y <= 2100:
            found.append(("%04d-%02d-%02d" % (y, m, d), at))

    text = text or ""
    for m in re.finditer(r"(?<![\d.])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)(?![/.-]\d)", text):
        add(m.group(1), m.group(2), m.group(3), m.start())
    for m in re.finditer(r"(?<![\d/.-])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?!\d)(?![/.-]\d)", text):
        a, b = int(m.group(1)), int(m.group(2))
        if a > 12 or (day_first and b <= 12):
            add(m.group(3), b, a, m.start())
        else:
            add(m.group(3), a, b, m.start())
    for m in re.finditer(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + MONTH + r",?\s+(\d{4})\b", text, re.IGNORECASE):
        add(m.group(3), MONTHS[m.group(2).lower()], m.group(1), m.start())
    for m in re.finditer(r"\b" + MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", text, re.IGNORECASE):
        add(m.group(3), MONTHS[m.group(1).lower()], m.group(2), m.start())
    found.sort(key=lambda f: f[1])
    return found


def is_date_param(param, spec):
    """Whether a parameter holds a date: its schema's format, a description
    that spells the form (YYYY-MM-DD), or its name (`*_date`, `dob`)."""
    spec = spec if isinstance(spec, dict) else {}
    if spec.get("format") in ("date", "date-time"):
        return True
    if re.search(r"YYYY|\bdate\b", str(spec.get("description") or ""), re.IGNORECASE):
        return spec.get("type") in (None, "string")
    parts = param.lower().split("_")
    return "date" in parts or param in ("dob", "birthday", "birthdate")


def coerce(value, spec):
    """A value as the schema types it: numbers from digits ("24" -> 24 for
    an integer), an enum's own value for its text."""
    if value is None or not isinstance(spec, dict):
        return value
    if spec.get("enum"):
        for option in spec["enum"]:
            if str(option) == str(value) or str(option).lower() == str(value).lower():
                return option
    kind = spec.get("type")
    if kind in ("integer", "number") and isinstance(value, str):
        plain = re.sub(r"[,$£€\s]", "", value)
        try:
            number = float(plain)
        except ValueError:
            return value
        return int(number) if kind == "integer" and number == int(number) else number
    if kind == "integer" and isinstance(value, float) and value == int(value):
        return int(value)
    return value


def as_examples(value, spec):
    """A value written as its parameter's examples write it: in capitals
    where they are ("sea" -> SEA for 'SEA')."""
    if not isinstance(value, str) or not value.isalpha():
        return value
    quoted = re.findall(r"'([^'\s]{2,12})'", str((spec or {}).get("description") or ""))
    if quoted and all(q.isalpha() and q.isupper() for q in quoted) and len(value) == len(quoted[0]):
        return value.upper()
    return value


def typed(tool, arguments):
    """A call's arguments as the tool's schema types them (`coerce`)."""
    return {k: coerce(v, tool.params.get(k) or {}) for k, v in arguments.items()}


class Reading:
    """The policy as the conduct checks read it: the rules `sparring policy
    SPEC --json` prints, each with its class, tools and `detail` (the
    identifying tools, the order, the fields never shown, the hand-off's
    tools, triggers and bounds). `sparring calibrate` hands it to the
    agents in SPARRING_POLICY_READING; a real agent never gets it."""

    def __init__(self, data):
        self.rules = [r for r in (data.get("rules") or []) if isinstance(r, dict)]

    def of(self, cls):
        return [r for r in self.rules if r.get("class") == cls]

    @staticmethod
    def detail(rule):
        return rule.get("detail") or {}

    def auth_rules(self, names):
        """The identification rules as (identifying tools, covered tools,
        text): the tools the check reads (`via`), else the tools of `names`
        the rule's text names ("Verify the caller with `verify_employee`
        …"), which the check does not read but the policy asks for."""
        out = []
        for r in self.of("authenticate_first"):
            via = list(self.detail(r).get("via") or [])
            text = r.get("text") or ""
            if not via:
                via = [n for n in names if re.search(r"(?<![\w])" + re.escape(n) + r"(?![\w])", text)]
            out.append((via, list(r.get("tools") or []), text))
        return out

    def via(self, names=()):
        """The tools that identify the person, in the rules' order."""
        out = []
        for via, _, _ in self.auth_rules(names):
            for name in via:
                if name not in out:
                    out.append(name)
        return out

    def guarded(self, name, names=()):
        """Whether a tool may be called only once the person is identified."""
        return any(name in tools and via for via, tools, _ in self.auth_rules(names))

    def confirms(self, name):
        """Whether a tool needs the person's yes first."""
        return any(name in (r.get("tools") or []) for r in self.of("confirm_before"))

    def confirm_texts(self, name):
        return [r.get("text") or "" for r in self.of("confirm_before") if name in (r.get("tools") or [])]

    def first(self, name):
        """For each order rule that puts `name` second, the tools one of
        which must succeed before it."""
        return [self.detail(r).get("first") or [] for r in self.of("order")
                if name in (self.detail(r).get("then") or [])]

    def protected(self):
        """The field names never to show, and whether card numbers count."""
        fields, cards = [], False
        for r in self.of("never_reveal"):
            d = self.detail(r)
            fields += [f for f in d.get("fields") or [] if f not in fields]
            cards = cards or bool(d.get("cards"))
        return fields, cards

    def escalations(self):
        """The escalate rules with a hand-off tool: (tools, triggers, rule)."""
        return [(self.detail(r).get("to") or [], self.detail(r).get("triggers") or [], r)
                for r in self.of("escalate") if self.detail(r).get("to")]

    def bounds(self, name):
        """The argument bounds on a tool: (param, max, hand-off tools or
        None) from the limit and escalate rules."""
        out = []
        # A hand-off's bound first: past it, the policy says whom to hand to.
        for r in self.of("escalate") + self.of("limit"):
            d = self.detail(r)
            for b in d.get("bounds") or []:
                if b.get("counted") == "argument" and b.get("tool") == name and b.get("param"):
                    out.append((b["param"], float(b.get("max") or 0), d.get("to") if r.get("class") == "escalate" else None))
        return out

    def per_record(self, name):
        """The most successful calls of a tool on one record, or None."""
        caps = [float(b.get("max") or 0) for r in self.of("limit") for b in self.detail(r).get("bounds") or []
                if b.get("counted") == "calls_per_record" and b.get("tool") == name]
        return min(caps) if caps else None


# What a person identifies themselves with, as a policy names it, and the
# fields of a record that hold it.
IDENTITY_DETAILS = {
    "date_of_birth": (r"date of birth|\bdob\b|birth ?date|\bborn\b", ("birth", "dob")),
    "zip_code": (r"\bzip\b|postal code|postcode", ("zip", "postal", "postcode")),
    "last_name": (r"last name|surname|family name", ("last_name", "surname", "family_name")),
    "email": (r"e-?mail", ("email",)),
    "phone_number": (r"phone number|mobile number|\bphone\b", ("phone", "mobile")),
}


def load_reading():
    """The reading SPARRING_POLICY_READING names, or None (run by hand)."""
    path = os.environ.get("SPARRING_POLICY_READING")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return Reading(json.load(f))
    except (OSError, ValueError):
        return None


def check_words(text):
    """Words as the conduct checks cut them (lowercase; letters, digits,
    `'` and `#`)."""
    return [w for w in re.split(r"[^\w'#]|_", (text or "").lower().replace("’", "'")) if w]


# Whom a person asks for when they ask for a human, as the checks read it.
HUMANS = {"human", "person", "manager", "supervisor", "representative", "someone", "operator"}
ASKING = {"speak", "talk", "transfer", "connect", "want", "need", "get", "put", "escalate", "ask", "see"}


def recipients(names):
    """Whom hand-off tools hand over to, by their names' words after `to`."""
    out = []
    for name in names:
        parts = name.split("_")
        if "to" in parts:
            for p in parts[parts.index("to") + 1:]:
                out.append(p[:-1] if p.endswith("s") and len(p) > 3 else p)
    return out


def asks_for_human(text, whom):
    """Whether a message asks for a human or for whom a hand-off reaches
    (a verb of asking with the person just after it), as the checks read it."""
    w = check_words(text)

    def who(x):
        return x in HUMANS or any(x == r or x[:-1] == r for r in whom)

    asks = any(x in ASKING and (any(who(y) for y in w[i + 1:i + 6])
                                or any(a == "live" and b == "agent" for a, b in zip(w[i + 1:i + 6], w[i + 2:i + 6])))
               for i, x in enumerate(w))
    negated = any(x in ("not", "no") or x.endswith("n't") for x in w)
    return asks and not negated


def trigger_met(trigger, role, text):
    """Whether one message meets one trigger of an escalate rule (all its
    words, word starts matching: `stole` meets `stolen`)."""
    needed = trigger.get("words") or []
    if not needed or not (role == "user" or (role == "tool" and len(needed) == 1)):
        return False
    w = check_words(text)
    for n in needed:
        nw = check_words(n)
        if len(nw) > 1:
            if not any(w[i:i + len(nw)] == nw for i in range(len(w))):
                return False
        elif not any(x.startswith(n) or (len(x) >= 4 and n.startswith(x)) for x in w):
            return False
    return True


READING = load_reading()


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
