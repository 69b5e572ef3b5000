"""Lexicon and inflection tables of the synthetic English-to-German corpus.

Open-class words are kept as compact ``|``-separated tables, one entry a line,
parsed into named tuples at import. Semantic classes (one letter each) keep the
sentences plausible: P person, A animal, T thing, B container (what opens and
closes), C clothing, E device, F food, X text, S story, L place. A verb's
``subj``/``obj``/``iobj`` list the classes it accepts there. Verb flags:
m motion (takes directional phrases), b takes a "for" phrase, d dative object,
c that-clause complement.

German separable verbs are written as in a dictionary, "hebt auf"; English
phrasal verbs as "picks up" (the particle is the second word).
"""

from typing import NamedTuple


class Noun(NamedTuple):
    """A noun: English sg/pl, German sg/pl, gender m/f/n, semantic class."""

    en: str
    en_pl: str
    de: str
    de_pl: str
    gender: str
    cls: str


class Adj(NamedTuple):
    """An adjective: English, German stem that takes the endings, classes."""

    en: str
    de: str
    cls: str


class Verb(NamedTuple):
    """A verb with 3sg, plural and participle forms on both sides."""

    en: str
    en_pl: str
    en_part: str
    de: str
    de_pl: str
    de_part: str
    aux: str  # h = haben, s = sein
    subj: str
    obj: str
    flags: str
    iobj: str


class Prep(NamedTuple):
    """A preposition, the case it governs and its use (loc/dir/com/ben)."""

    en: str
    de: str
    case: str
    kind: str


class Adverb(NamedTuple):
    """A time or frequency adverb; tense is '', 'pres' or 'perf' (only there)."""

    en: str
    de: str
    kind: str  # time (English clause end) or freq (before the English verb)
    tense: str
    front: bool  # may open a main clause


class Conj(NamedTuple):
    """A conjunction; tense restricts a subordinate clause it introduces."""

    en: str
    de: str
    tense: str


class Det(NamedTuple):
    """A determiner: English sg/pl, German stem and inflection type."""

    en: str
    en_pl: str
    de: str
    kind: str  # def (der), dem (dies-), ein (sg only), poss (mein)


class Pron(NamedTuple):
    """A third-person subject pronoun."""

    en: str
    de: str
    plural: bool


def _rows(text: str) -> list[list[str]]:
    """Entries are separated by newlines or ';', fields by '|'."""
    return [e.strip().split("|") for e in text.replace(";", "\n").strip().splitlines()]


NOUNS: tuple[Noun, ...] = tuple(
    Noun(*r)
    for r in _rows("""
man|men|Mann|Männer|m|P; woman|women|Frau|Frauen|f|P; child|children|Kind|Kinder|n|P
girl|girls|Mädchen|Mädchen|n|P; teacher|teachers|Lehrer|Lehrer|m|P
doctor|doctors|Arzt|Ärzte|m|P; friend|friends|Freund|Freunde|m|P
pupil|pupils|Schüler|Schüler|m|P; baker|bakers|Bäcker|Bäcker|m|P
cook|cooks|Koch|Köche|m|P; farmer|farmers|Landwirt|Landwirte|m|P
sister|sisters|Schwester|Schwestern|f|P; brother|brothers|Bruder|Brüder|m|P
mother|mothers|Mutter|Mütter|f|P; father|fathers|Vater|Väter|m|P
daughter|daughters|Tochter|Töchter|f|P; son|sons|Sohn|Söhne|m|P
king|kings|König|Könige|m|P; queen|queens|Königin|Königinnen|f|P
driver|drivers|Fahrer|Fahrer|m|P; singer|singers|Sänger|Sänger|m|P
painter|painters|Maler|Maler|m|P; guest|guests|Gast|Gäste|m|P
baby|babies|Baby|Babys|n|P; aunt|aunts|Tante|Tanten|f|P
uncle|uncles|Onkel|Onkel|m|P; dog|dogs|Hund|Hunde|m|A; cat|cats|Katze|Katzen|f|A
horse|horses|Pferd|Pferde|n|A; bird|birds|Vogel|Vögel|m|A; cow|cows|Kuh|Kühe|f|A
mouse|mice|Maus|Mäuse|f|A; fish|fish|Fisch|Fische|m|A; sheep|sheep|Schaf|Schafe|n|A
pig|pigs|Schwein|Schweine|n|A; duck|ducks|Ente|Enten|f|A; fox|foxes|Fuchs|Füchse|m|A
wolf|wolves|Wolf|Wölfe|m|A; goat|goats|Ziege|Ziegen|f|A
rabbit|rabbits|Kaninchen|Kaninchen|n|A; owl|owls|Eule|Eulen|f|A
frog|frogs|Frosch|Frösche|m|A; ball|balls|Ball|Bälle|m|T
key|keys|Schlüssel|Schlüssel|m|T; cup|cups|Tasse|Tassen|f|T
bottle|bottles|Flasche|Flaschen|f|B; bag|bags|Tasche|Taschen|f|B
box|boxes|Kiste|Kisten|f|B; picture|pictures|Bild|Bilder|n|T
pen|pens|Stift|Stifte|m|T; glass|glasses|Glas|Gläser|n|T
plate|plates|Teller|Teller|m|T; knife|knives|Messer|Messer|n|T
car|cars|Auto|Autos|n|T; bicycle|bicycles|Fahrrad|Fahrräder|n|T
boat|boats|Boot|Boote|n|T; umbrella|umbrellas|Schirm|Schirme|m|T
flower|flowers|Blume|Blumen|f|T; gift|gifts|Geschenk|Geschenke|n|T
door|doors|Tür|Türen|f|B; window|windows|Fenster|Fenster|n|B; hat|hats|Hut|Hüte|m|C
coat|coats|Mantel|Mäntel|m|C; shoe|shoes|Schuh|Schuhe|m|C
dress|dresses|Kleid|Kleider|n|C; jacket|jackets|Jacke|Jacken|f|C
lamp|lamps|Lampe|Lampen|f|E; computer|computers|Computer|Computer|m|E
phone|phones|Telefon|Telefone|n|E; radio|radios|Radio|Radios|n|E
television|televisions|Fernseher|Fernseher|m|E; apple|apples|Apfel|Äpfel|m|F
bread|breads|Brot|Brote|n|F; cake|cakes|Kuchen|Kuchen|m|F
soup|soups|Suppe|Suppen|f|F; egg|eggs|Ei|Eier|n|F; cheese|cheeses|Käse|Käse|m|F
banana|bananas|Banane|Bananen|f|F; pear|pears|Birne|Birnen|f|F
sausage|sausages|Wurst|Würste|f|F; potato|potatoes|Kartoffel|Kartoffeln|f|F
book|books|Buch|Bücher|n|X; letter|letters|Brief|Briefe|m|X
newspaper|newspapers|Zeitung|Zeitungen|f|X; map|maps|Karte|Karten|f|X
story|stories|Geschichte|Geschichten|f|S; poem|poems|Gedicht|Gedichte|n|S
joke|jokes|Witz|Witze|m|S; song|songs|Lied|Lieder|n|S; house|houses|Haus|Häuser|n|L
garden|gardens|Garten|Gärten|m|L; kitchen|kitchens|Küche|Küchen|f|L
school|schools|Schule|Schulen|f|L; church|churches|Kirche|Kirchen|f|L
park|parks|Park|Parks|m|L; forest|forests|Wald|Wälder|m|L
river|rivers|Fluss|Flüsse|m|L; lake|lakes|See|Seen|m|L
bridge|bridges|Brücke|Brücken|f|L; street|streets|Straße|Straßen|f|L
city|cities|Stadt|Städte|f|L; village|villages|Dorf|Dörfer|n|L
castle|castles|Schloss|Schlösser|n|L; shop|shops|Laden|Läden|m|L
hotel|hotels|Hotel|Hotels|n|L; room|rooms|Zimmer|Zimmer|n|L
field|fields|Feld|Felder|n|L; tree|trees|Baum|Bäume|m|L
table|tables|Tisch|Tische|m|L; bed|beds|Bett|Betten|n|L; wall|walls|Mauer|Mauern|f|L
school bus|school buses|Schulbus|Schulbusse|m|T
coffee cup|coffee cups|Kaffeetasse|Kaffeetassen|f|T
door key|door keys|Türschlüssel|Türschlüssel|m|T
tennis ball|tennis balls|Tennisball|Tennisbälle|m|T
flower pot|flower pots|Blumentopf|Blumentöpfe|m|T
toy car|toy cars|Spielzeugauto|Spielzeugautos|n|T
fire engine|fire engines|Feuerwehrauto|Feuerwehrautos|n|T
sheep dog|sheep dogs|Schäferhund|Schäferhunde|m|A
birthday cake|birthday cakes|Geburtstagskuchen|Geburtstagskuchen|m|F
chocolate cake|chocolate cakes|Schokoladenkuchen|Schokoladenkuchen|m|F
fairy tale|fairy tales|Märchen|Märchen|n|S
apple tree|apple trees|Apfelbaum|Apfelbäume|m|L
train station|train stations|Bahnhof|Bahnhöfe|m|L
post office|post offices|Postamt|Postämter|n|L
bus stop|bus stops|Bushaltestelle|Bushaltestellen|f|L
living room|living rooms|Wohnzimmer|Wohnzimmer|n|L
city hall|city halls|Rathaus|Rathäuser|n|L
swimming pool|swimming pools|Schwimmbad|Schwimmbäder|n|L
kitchen table|kitchen tables|Küchentisch|Küchentische|m|L
""")
)

ADJECTIVES: tuple[Adj, ...] = tuple(  # in English order: opinion, size, ..., colour
    Adj(*r)
    for r in _rows("""
beautiful|schön|PATBCLS; strange|seltsam|PATBSXL; funny|lustig|PAS; famous|berühmt|PLS
clever|klug|PA; brave|mutig|PA; friendly|freundlich|PA; happy|glücklich|PA
sad|traurig|PAS; tired|müd|PA; hungry|hungrig|PA; angry|wütend|PA; lazy|faul|PA
quiet|leis|PAL; loud|laut|PAE; fast|schnell|PA; cheap|billig|TBCEF
expensive|teur|TBCEL; big|groß|PATBCEFL; small|klein|PATBCEFL; long|lang|XSCL
short|kurz|XSC; heavy|schwer|TBX; clean|sauber|TBCL; dirty|schmutzig|PATBCL
warm|warm|FCL; cold|kalt|FL; empty|leer|TBL; dark|dunkl|LC; fresh|frisch|F
old|alt|PATBCEXL; young|jung|PA; new|neu|TBCEXL; red|rot|ATBCEFL; blue|blau|TBCEL
green|grün|TBCEFL; black|schwarz|ATBCEL; white|weiß|ATBCEL; yellow|gelb|TBCEFL
brown|braun|ATBCEFL
""")
)

COLOURS = frozenset(
    a for a in ADJECTIVES if a.de in "rot blau grün schwarz weiß gelb braun".split()
)

# en 3sg | en pl | en participle | de 3sg | de 3pl | de participle | aux | subj
# | obj | flags | iobj
VERBS: tuple[Verb, ...] = tuple(
    Verb(*r)
    for r in _rows("""
sees|see|seen|sieht|sehen|gesehen|h|PA|PATBCEFXLS||
finds|find|found|findet|finden|gefunden|h|PA|ATBCEFX|b|
buys|buy|bought|kauft|kaufen|gekauft|h|P|TBCEFX|b|
reads|read|read|liest|lesen|gelesen|h|P|XS||
eats|eat|eaten|isst|essen|gegessen|h|P|F||
carries|carry|carried|trägt|tragen|getragen|h|PA|PATBCEFX||
paints|paint|painted|malt|malen|gemalt|h|P|PATBCEFL|b|
likes|like|liked|mag|mögen|gemocht|h|PA|PATBCEFXLS||
visits|visit|visited|besucht|besuchen|besucht|h|P|PL||
meets|meet|met|trifft|treffen|getroffen|h|PA|PA||
looks for|look for|looked for|sucht|suchen|gesucht|h|PA|PATBCEX||
follows|follow|followed|folgt|folgen|gefolgt|s|PA|PA|d|
helps|help|helped|hilft|helfen|geholfen|h|PA|PA|d|
hears|hear|heard|hört|hören|gehört|h|PA|PAES||
cooks|cook|cooked|kocht|kochen|gekocht|h|P|F|b|
catches|catch|caught|fängt|fangen|gefangen|h|PA|ATB||
repairs|repair|repaired|repariert|reparieren|repariert|h|P|TBCE|b|
forgets|forget|forgotten|vergisst|vergessen|vergessen|h|P|TBCEX||
knows|know|known|kennt|kennen|gekannt|h|PA|PALS||
writes|write|written|schreibt|schreiben|geschrieben|h|P|XS|b|
gives|give|given|gibt|geben|gegeben|h|P|ATBCEFX||PA
shows|show|shown|zeigt|zeigen|gezeigt|h|P|PATBCEFXL||P
brings|bring|brought|bringt|bringen|gebracht|h|PA|TBCEFX||PA
sells|sell|sold|verkauft|verkaufen|verkauft|h|P|ATBCEF||P
tells|tell|told|erzählt|erzählen|erzählt|h|P|S||PA
picks up|pick up|picked up|hebt auf|heben auf|aufgehoben|h|P|TBCEX||
calls|call|called|ruft an|rufen an|angerufen|h|P|P||
closes|close|closed|macht zu|machen zu|zugemacht|h|P|BX||
opens|open|opened|macht auf|machen auf|aufgemacht|h|P|BX||
switches on|switch on|switched on|schaltet ein|schalten ein|eingeschaltet|h|P|E||
throws away|throw away|thrown away|wirft weg|werfen weg|weggeworfen|h|P|TBCEFX||
gives back|give back|given back|gibt zurück|geben zurück|zurückgegeben|h|P|TBCEX||
looks at|look at|looked at|schaut an|schauen an|angeschaut|h|PA|PATBCEFXL||
cleans up|clean up|cleaned up|räumt auf|räumen auf|aufgeräumt|h|P|L||
puts on|put on|put on|zieht an|ziehen an|angezogen|h|P|C||
sleeps|sleep|slept|schläft|schlafen|geschlafen|h|PA|||
runs|run|run|läuft|laufen|gelaufen|s|PA||m|
laughs|laugh|laughed|lacht|lachen|gelacht|h|P|||
sings|sing|sung|singt|singen|gesungen|h|PA|||
waits|wait|waited|wartet|warten|gewartet|h|PA|||
plays|play|played|spielt|spielen|gespielt|h|PA|||
swims|swim|swum|schwimmt|schwimmen|geschwommen|s|PA||m|
works|work|worked|arbeitet|arbeiten|gearbeitet|h|P|||
sits|sit|sat|sitzt|sitzen|gesessen|h|PA|||
stands|stand|stood|steht|stehen|gestanden|h|PATB|||
jumps|jump|jumped|springt|springen|gesprungen|s|PA||m|
comes|come|come|kommt|kommen|gekommen|s|PA||m|
goes|go|gone|geht|gehen|gegangen|s|PA||m|
drives|drive|driven|fährt|fahren|gefahren|s|P||m|
falls|fall|fallen|fällt|fallen|gefallen|s|PATBCEX||m|
gets up|get up|got up|steht auf|stehen auf|aufgestanden|s|PA|||
falls asleep|fall asleep|fallen asleep|schläft ein|schlafen ein|eingeschlafen|s|PA|||
comes back|come back|come back|kommt zurück|kommen zurück|zurückgekommen|s|PA||m|
goes away|go away|gone away|geht weg|gehen weg|weggegangen|s|PA||m|
arrives|arrive|arrived|kommt an|kommen an|angekommen|s|PA|||
says|say|said|sagt|sagen|gesagt|h|P||c|
thinks|think|thought|denkt|denken|gedacht|h|P||c|
believes|believe|believed|glaubt|glauben|geglaubt|h|P||c|
knows|know|known|weiß|wissen|gewusst|h|P||c|
""")
)

PREPS: tuple[Prep, ...] = tuple(
    Prep(*r)
    for r in _rows("""
in|in|dat|loc
on|auf|dat|loc
under|unter|dat|loc
behind|hinter|dat|loc
next to|neben|dat|loc
in front of|vor|dat|loc
at|an|dat|loc
near|bei|dat|loc
to|zu|dat|dir
into|in|acc|dir
through|durch|acc|dir
across|über|acc|dir
out of|aus|dat|dir
from|von|dat|dir
with|mit|dat|com
without|ohne|acc|com
for|für|acc|ben
""")
)

# Classes of the noun phrase inside a prepositional phrase of each kind.
PP_CLASSES: dict[str, str] = {"loc": "L", "dir": "L", "com": "PATBCE", "ben": "PA"}

ADVERBS: tuple[Adverb, ...] = tuple(
    Adverb(en, de, kind, tense, front == "1")
    for en, de, kind, tense, front in _rows("""
today|heute|time||1
now|jetzt|time|pres|1
soon|bald|time|pres|1
in the morning|morgens|time||1
in the evening|abends|time||1
at night|nachts|time||1
at noon|mittags|time||1
every day|jeden Tag|time|pres|1
on Sunday|am Sonntag|time||1
this morning|heute Morgen|time||1
often|oft|freq||1
always|immer|freq||0
sometimes|manchmal|freq||1
never|nie|freq||0
rarely|selten|freq||0
usually|meistens|freq|pres|1
already|schon|freq|perf|0
just|gerade|freq|perf|0
""")
)

SUBORDINATORS: tuple[Conj, ...] = tuple(
    Conj(*r)
    for r in _rows("""
because|weil|
although|obwohl|
while|während|
when|wenn|pres
if|wenn|pres
before|bevor|pres
after|nachdem|perf
""")
)

# Coordinators of main clauses; German puts a comma before "aber".
COORDINATORS: tuple[Conj, ...] = (
    Conj("and", "und", ""),
    Conj("but", "aber", ""),
    Conj("or", "oder", ""),
)

THE = Det("the", "the", "", "def")
A = Det("a", "", "ein", "ein")
THIS = Det("this", "these", "dies", "dem")
POSSESSIVES: tuple[Det, ...] = (
    Det("my", "my", "mein", "poss"),
    Det("our", "our", "unser", "poss"),
    Det("his", "his", "sein", "poss"),
    Det("her", "her", "ihr", "poss"),
)
PRONOUNS: tuple[Pron, ...] = (
    Pron("he", "er", False),
    Pron("she", "sie", False),
    Pron("they", "sie", True),
)


# Inflection tables: case -> forms for masculine, feminine, neuter, plural.
def _cases(text: str) -> dict[str, tuple[str, ...]]:
    rows = [tuple(w.strip("-") for w in part.split()) for part in text.split("/")]
    return dict(zip(("nom", "acc", "dat"), rows, strict=True))


DEF_ARTICLE = _cases("der die das die / den die das die / dem der dem den")
RELATIVE = _cases("der die das die / den die das die / dem der dem denen")
DER_ENDINGS = _cases("er e es e / en e es e / em er em en")  # dies-
EIN_ENDINGS = _cases("- e - e / en e - e / em er em en")  # ein-, mein-
ADJ_WEAK = _cases("e e e en / en e e en / en en en en")
ADJ_MIXED = _cases("er e es en / en e es en / en en en en")
ADJ_STRONG = _cases("er e es e / en e es e / em er em en")
# Preposition + definite article -> contraction.
CONTRACTIONS = {
    ("zu", "dem"): "zum",
    ("zu", "der"): "zur",
    ("in", "dem"): "im",
    ("in", "das"): "ins",
    ("von", "dem"): "vom",
    ("bei", "dem"): "beim",
    ("an", "dem"): "am",
}
# Perfect auxiliaries: (singular, plural) for haben and sein.
AUX = {"h": ("hat", "haben"), "s": ("ist", "sind")}
