//! Small word lists the record generator draws plausible values from.

pub(crate) const FIRST_NAMES: &[&str] = &[
    "Ana", "Ben", "Chloe", "Daniel", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi",
    "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vera",
    "Wei", "Yusuf", "Zara",
];
pub(crate) const LAST_NAMES: &[&str] = &[
    "Lima", "Okafor", "Martin", "Kim", "Patel", "Tanaka", "Brown", "Nair", "Silva", "Novak",
    "Haddad", "Larsen", "Moreau", "Ito", "Mensah", "Rossi", "Garcia", "Schmidt", "Costa", "Wright",
];
pub(crate) const CITIES: &[(&str, &str, &str)] = &[
    ("Austin", "TX", "78701"),
    ("Portland", "OR", "97201"),
    ("Denver", "CO", "80202"),
    ("Columbus", "OH", "43215"),
    ("Phoenix", "AZ", "85004"),
    ("Seattle", "WA", "98101"),
    ("Chicago", "IL", "60601"),
    ("Boston", "MA", "02108"),
];
pub(crate) const STREETS: &[&str] = &[
    "Oak Street",
    "Maple Avenue",
    "Cedar Lane",
    "Elm Road",
    "Pine Court",
    "Lake Drive",
    "Hill Street",
];
pub(crate) const AIRPORTS: &[&str] = &[
    "JFK", "LAX", "SFO", "ORD", "SEA", "BOS", "DEN", "ATL", "MIA", "PHX", "LAS", "MSP",
];
pub(crate) const NOUNS: &[&str] = &[
    "lamp", "chair", "notebook", "backpack", "kettle", "monitor", "keyboard", "jacket", "speaker",
    "blender", "tent", "watch",
];
pub(crate) const ADJECTIVES: &[&str] = &[
    "blue", "compact", "classic", "large", "quiet", "wireless", "steel", "light", "premium",
];
pub(crate) const DOMAINS: &[&str] = &["mail.test", "post.test", "inbox.test"];
