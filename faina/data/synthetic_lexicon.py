"""The Italian-like phrase bank of the synthetic sample corpus (``faina.sample``).

Written for this project, not taken from Faina: Faina may not be redistributed, so the demo and the
tests need a stand-in with the same shape. Every label owns a few trigger templates whose fixed words
are its lexical cue (a model can learn label <-> wording), while the slot fillers ({G}, {A}, {T}, ...)
come from topic vocabularies shared by all labels, so the topic says nothing about the label.

Template slots: {G} a group, {A} an actor, {T} a thing, {P} a place, {AUTH} an authority (all of the
post's topic), {LL} / {NC} a nested Loaded-language / Name-calling phrase that becomes its own span
inside the outer one (the overlaps Faina is full of). Lists, never sets: the generator's choices must
not depend on hash order.
"""

from __future__ import annotations

TOPICS: tuple[str, ...] = ("migration", "climate change", "public health")

# Span counts of both Faina annotators (docs/faina-format.md): the skew the sample reproduces per view.
FAINA_FREQUENCIES: dict[str, int] = {
    "Loaded-language": 2484,
    "Appeal-to-emotion": 2049,
    "Vagueness": 1338,
    "Name-calling-or-labelling": 1124,
    "Doubt": 482,
    "Hasty-generalization": 464,
    "Evading-the-burden-of-proof": 406,
    "Flag-waving": 393,
    "Slogan": 384,
    "Ad-hominem": 319,
    "Thought-terminating-cliches": 285,
    "Red-herring": 257,
    "False-analogy": 239,
    "Appeal-to-authority": 213,
    "Slippery-slope": 172,
    "Causal-oversimplification": 142,
    "Strawman": 109,
    "Cherry-picking": 94,
    "False-dilemma": 90,
    "Circular-reasoning": 20,
}

SLOTS: dict[str, dict[str, list[str]]] = {
    "migration": {
        "G": ["i migranti", "gli immigrati", "le ONG", "i richiedenti asilo", "gli stranieri"],
        "A": ["il governo", "Bruxelles", "la sinistra", "il ministro dell'Interno", "l'Europa", "i sindaci"],
        "T": ["l'accoglienza", "il decreto sicurezza", "lo ius soli", "la redistribuzione", "il flusso dei barconi"],
        "P": ["Lampedusa", "le periferie", "le nostre città", "i centri di accoglienza"],
    },
    "climate change": {
        "G": ["gli ambientalisti", "i ragazzi dei Fridays", "gli scienziati del clima", "gli industriali"],
        "A": ["Greta", "l'ONU", "le multinazionali", "i governi europei", "la Commissione europea"],
        "T": [
            "il riscaldamento globale",
            "le emissioni di CO2",
            "l'auto elettrica",
            "la transizione ecologica",
            "il cambiamento climatico",
        ],
        "P": ["i ghiacciai", "le Alpi", "i nostri mari", "le campagne"],
    },
    "public health": {
        "G": ["i medici", "i virologi", "i vaccinati", "gli infermieri", "i giornalisti"],
        "A": ["l'OMS", "il ministro della Salute", "Big Pharma", "il CTS", "l'ISS"],
        "T": ["il vaccino", "il green pass", "il lockdown", "la terza dose", "l'obbligo delle mascherine"],
        "P": ["gli ospedali", "le terapie intensive", "le RSA", "le scuole"],
    },
}

# Preposition + article -> articulated preposition, applied where a slot phrase follows "a" / "di"
# ("chi crede a il governo" -> "chi crede al governo").
ARTICULATED: dict[tuple[str, str], str] = {
    (prep, article): stem + ending
    for prep, stem in (("a", "a"), ("di", "de"))
    for article, ending in (
        ("il", "l"),
        ("lo", "llo"),
        ("la", "lla"),
        ("i", "i"),
        ("gli", "gli"),
        ("le", "lle"),
        ("l'", "ll'"),
    )
}

AUTHORITIES: list[str] = [
    "un premio Nobel",
    "un famoso professore di Harvard",
    "il più grande esperto mondiale",
    "uno scienziato americano",
    "il professor Bianchi",
    "un primario di Milano",
]

# label -> trigger templates (the span's text). Lengths follow Faina's: short Loaded-language, long Strawman.
TEMPLATES: dict[str, list[str]] = {
    "Loaded-language": [
        "vergogna assoluta",
        "pura follia",
        "follia totale",
        "invasione incontrollata",
        "dittatura sanitaria",
        "truffa colossale",
        "uno schifo totale",
        "disastro epocale",
        "una vergogna assoluta",
        "terrorismo mediatico",
        "sciagura",
        "scempio vergognoso",
    ],
    "Name-calling-or-labelling": [
        "quei buonisti da salotto",
        "i soliti gretini",
        "questi pecoroni",
        "sciacalli",
        "i radical chic",
        "quel branco di incompetenti",
        "i servi di {A}",
    ],
    "Appeal-to-emotion": [
        "pensate ai vostri figli , è {LL} 😢",
        "mi si spezza il cuore a vedere {P} ridotti così",
        "i nostri nonni muoiono soli mentre {A} fa festa , {LL} 😭",
        "povere mamme e poveri bambini , chi penserà a loro ?",
        "provate a immaginare il dolore delle famiglie , {LL} !",
        "ho le lacrime agli occhi per quello che succede 💔",
    ],
    "Vagueness": [
        "qualcosa non torna in questa storia",
        "secondo alcuni studi ci sarebbero effetti strani",
        "si dice in giro che le cose stanno diversamente",
        "certi ambienti sanno come stanno le cose",
        "ci sono cose che non ci dicono",
    ],
    "Doubt": [
        "ma siamo sicuri che {A} dica la verità ?",
        "chi ci crede ancora a {A} ?",
        "mi chiedo se {A} sappia davvero cosa sta facendo",
        "strano che nessuno faccia domande 🤔",
    ],
    "Hasty-generalization": [
        "{G} sono tutti uguali , nessuno escluso",
        "{G} non fanno mai niente di buono",
        "lo vedi ogni volta , sempre e ovunque",
        "tutti quelli come loro mentono sempre",
    ],
    "Evading-the-burden-of-proof": [
        "è evidente che {A} nasconde la verità , non servono prove",
        "dimostratemi il contrario se ci riuscite",
        "fatevi una ricerca e capirete da soli",
        "non c'è bisogno di fonti , è tutto evidente",
    ],
    "Flag-waving": [
        "noi italiani non ci facciamo comandare da nessuno",
        "difendiamo la nostra patria e le tradizioni",
        "l'Italia agli italiani",
        "orgogliosi della nostra nazione 💪",
    ],
    "Slogan": [
        "#portichiusi",
        "non esiste un pianeta B",
        "#iononmivaccino",
        "#restiamoumani",
        "la salute prima di tutto !",
    ],
    "Ad-hominem": [
        "{A} parla di sacrifici ma gira in jet privato",
        "detto da uno che non ha mai lavorato in vita sua",
        "come fa a parlare chi non ha nemmeno una laurea ?",
        "ma chi sei tu per parlare , {NC} ?",
    ],
    "Thought-terminating-cliches": [
        "punto e basta",
        "fine della storia",
        "è così e non si discute",
        "inutile discutere",
        "e ho detto tutto",
    ],
    "Red-herring": [
        "e intanto i terremotati vivono ancora nei container",
        "pensassero piuttosto alle bollette che aumentano ogni mese",
        "e allora le tasse che paghiamo per mantenere i politici ?",
        "ma del prezzo della benzina nessuno parla ?",
    ],
    "False-analogy": [
        "{T} è come la roulette russa , prima o poi tocca a te",
        "è come lasciare la porta di casa aperta ai ladri",
        "è come curare il raffreddore tagliandosi la testa",
        "è come dare le chiavi della cantina a un ubriaco",
    ],
    "Appeal-to-authority": [
        "lo ha detto anche {AUTH} , quindi è vero",
        "{AUTH} lo conferma in un'intervista",
        "lo dice {AUTH} , mica uno qualunque",
    ],
    "Slippery-slope": [
        "oggi {T} , domani ci toglieranno anche la casa e alla fine perderemo ogni libertà",
        "prima {T} , poi il controllo totale e infine la dittatura vera e propria",
        "se accettiamo {T} adesso , tra qualche anno non avremo più nessun diritto",
    ],
    "Causal-oversimplification": [
        "se {P} sono in crisi è solo colpa di {A}",
        "{T} è colpa solo di {A} , nient'altro",
        "la colpa di tutto ce l'hanno {G} , guardate i numeri",
    ],
    "Strawman": [
        "quindi secondo {A} dovremmo aprire le porte a chiunque , lasciare che tutti facciano quello "
        "che vogliono e stare zitti mentre il paese va a rotoli",
        "insomma {A} vuole che rinunciamo alla macchina , alla carne , al riscaldamento e che torniamo a "
        "vivere nelle caverne come mille anni fa",
        "in pratica per {A} chi fa una domanda è {NC} da rinchiudere e chi non obbedisce deve essere "
        "punito senza nessuna pietà",
        "cioè fatemi capire , {A} sostiene che {T} non serve a niente e che dovremmo lasciare tutto al "
        "caso senza fare nulla , giusto ?",
    ],
    "Cherry-picking": [
        "un solo giorno di neve a maggio dimostra che è tutta una bufala",
        "conosco una persona che dopo {T} è stata male , questo dimostra tutto",
        "guardate questo unico dato : {T} non funziona [URL]",
        "in un solo paese è andata male , quindi {T} è un fallimento",
    ],
    "False-dilemma": [
        "o stai con noi o stai con {A} , non ci sono alternative",
        "o {T} o il disastro , non esiste una via di mezzo",
        "delle due l'una : o chiudiamo tutto o moriremo tutti",
    ],
    "Circular-reasoning": [
        "{T} è pericoloso perché è rischioso , ed è rischioso perché è pericoloso",
        "ha ragione perché lo dice lui , e lui dice sempre cose giuste",
        "è vero perché è così , e se è così allora è vero",
    ],
}

# Designated ambiguous phrases: annotator 1 reads them as the first label, annotator 2 as the second
# (the systematic disagreement the two views must show). Used for a share of the first label's spans.
AMBIGUOUS: dict[tuple[str, str], list[str]] = {
    ("Vagueness", "Hasty-generalization"): ["è sempre la solita storia", "le solite cose di sempre"],
    ("Doubt", "Name-calling-or-labelling"): ["quei presunti esperti", "il sedicente scienziato"],
    ("Flag-waving", "Slogan"): ["prima gli italiani !", "#PrimaGliItaliani"],
    ("Causal-oversimplification", "Hasty-generalization"): ["è tutta colpa loro , come sempre"],
    ("Thought-terminating-cliches", "Slogan"): ["svegliatevi !", "aprite gli occhi !"],
}

# Text outside any span: openers, fillers between fallacies, closers. {T}/{P} take the topic's words.
OPENERS: list[str] = [
    "[USER]",
    "[USER] [USER]",
    "buongiorno a tutti .",
    "ragazzi ,",
    "allora ,",
    "ultime notizie :",
    "leggete qui [URL]",
]
FILLERS: list[str] = [
    "oggi al telegiornale hanno parlato di {T} .",
    "ecco l'articolo [URL]",
    "ditemi voi .",
    "si parla di {T} anche oggi .",
    "la situazione di {P} è questa .",
    "grazie [USER] per la segnalazione .",
    "ho letto il servizio di ieri sera .",
    "qui c'è il video [URL]",
    "ne parlavamo proprio ieri con gli amici .",
]
LONG_FILLERS: list[str] = [
    "ieri sera ho guardato il dibattito in televisione e ho ascoltato con attenzione "
    "tutti gli ospiti che parlavano di {T} .",
    "nel fine settimana sono andato a trovare i miei genitori e anche lì non si parlava d'altro che di {T} e di {P} .",
    "vi lascio il link alla diretta di stamattina , dura un'ora ma vale la pena di ascoltarla fino in fondo [URL]",
]
CONNECTORS: list[str] = [".", ",", "!", "...", "e", "ma", "."]
WORD_CONNECTORS: list[str] = ["e", "ma", "e poi", "anzi"]  # after punctuation or an emoji
CLOSERS: list[str] = ["[URL]", "😡", "🤬", "👏", "🙏", "😱", "🔥", "🤮", "!!", "#news"]
TOPIC_HASHTAGS: dict[str, list[str]] = {
    "migration": ["#migranti", "#sbarchi"],
    "climate change": ["#clima", "#ambiente"],
    "public health": ["#covid", "#vaccini"],
}
