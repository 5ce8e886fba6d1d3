"""Realistic ChatGPT exports, generated: the input of ``palazzo bench scale``.

:func:`make_export` returns a ``conversations.json`` document in the shape ChatGPT's data
export has (and :mod:`palazzo.importers.chats` reads): a list of conversations, each with a
``mapping`` of nodes ``{id, message, parent, children}`` under an empty root node, a hidden
system message, ``message.author.role``, ``content.parts``, ``create_time`` and
``current_node``. It holds what makes a heavy user's history heavy: conversations from a few
messages to a few hundred, edited questions and regenerated answers (a node with several
children), now and then a tool round-trip and an image (left out by the importer), short
questions and answers with a long tail up to several thousand characters (code blocks,
lists), and text in English, German, French, Spanish, Russian and Japanese made from the word
lists below (no downloads). The same ``(messages, seed)`` gives the same document, byte for
byte.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Words a language, written for this generator: common words and some of the subjects people
# bring to a chat assistant. Japanese is written without spaces, as it is.
WORDS: dict[str, str] = {
    "en": """the a of to and in is that for it on with as this be are was you we can not
        but what how why when if your my our should could would will do does have has make
        use need want think know just about more than some any every each other new first
        last good better best problem question answer idea plan reason example result step
        way time day week month year people team project server database query index table
        migration backup deploy release version branch commit test bug error log memory cache
        token session user account password key file folder script function class module
        package library request response latency throughput budget invoice customer meeting
        schedule deadline garden recipe dinner travel flight hotel train ticket museum book
        chapter story poem letter email essay summary draft review feedback language grammar
        sentence paragraph word meaning history science physics biology chemistry math
        equation proof theorem graph node edge path search ranking vector embedding model
        training dataset benchmark metric accuracy health sleep exercise running coffee tea
        bread cheese apple weather rain winter summer holiday birthday gift family friend
        child school teacher lesson homework music guitar piano song movie series episode""",
    "de": """der die das und ist nicht ein eine zu mit auf für von den dem sich auch es
        wir ich du sie aber wenn dann wie warum was noch schon nur sehr mehr heute morgen
        gestern Woche Jahr Zeit Frage Antwort Problem Lösung Beispiel Schritt Grund Idee Plan
        Datenbank Abfrage Sicherung Server Dienst Anwendung Fehler Protokoll Speicher Datei
        Ordner Schlüssel Sitzung Benutzer Konto Passwort Rechnung Kunde Besprechung Termin
        Frist Garten Rezept Abendessen Reise Flug Hotel Zug Fahrkarte Museum Buch Kapitel
        Geschichte Gedicht Brief Zusammenfassung Entwurf Sprache Grammatik Satz Bedeutung
        Wissenschaft Physik Mathematik Gleichung Beweis Gesundheit Schlaf Kaffee Brot Käse
        Wetter Regen Winter Sommer Urlaub Geburtstag Familie Freund Kind Schule Lehrer Musik
        Lied Film Straße Stadt Haus Wohnung Miete Steuer Versicherung Arbeit Kollege Chef
        schnell langsam groß klein wichtig richtig falsch einfach schwierig möglich""",
    "fr": """le la les un une des et est pas que qui pour dans sur avec par ce cette nous
        vous je tu il elle mais si alors comment pourquoi quand encore déjà seulement très
        plus aujourd'hui demain hier semaine année temps question réponse problème solution
        exemple étape raison idée projet base données requête sauvegarde serveur service
        application erreur journal mémoire fichier dossier clé session utilisateur compte
        mot passe facture client réunion rendez-vous délai jardin recette dîner voyage vol
        hôtel train billet musée livre chapitre histoire poème lettre résumé brouillon
        langue grammaire phrase sens science physique mathématiques équation preuve santé
        sommeil café pain fromage météo pluie hiver été vacances anniversaire famille ami
        enfant école professeur musique chanson film rue ville maison appartement loyer
        impôt assurance travail collègue rapide lent grand petit important facile difficile""",
    "es": """el la los las un una y es no que para en con por este esta nosotros usted yo
        tú él ella pero si entonces cómo por qué cuándo todavía ya solo muy más hoy mañana
        ayer semana año tiempo pregunta respuesta problema solución ejemplo paso razón idea
        plan proyecto base datos consulta copia servidor servicio aplicación error registro
        memoria archivo carpeta clave sesión usuario cuenta contraseña factura cliente
        reunión cita plazo jardín receta cena viaje vuelo hotel tren billete museo libro
        capítulo historia poema carta resumen borrador idioma gramática frase significado
        ciencia física matemáticas ecuación prueba salud sueño café pan queso tiempo lluvia
        invierno verano vacaciones cumpleaños familia amigo niño escuela profesor música
        canción película calle ciudad casa piso alquiler impuesto seguro trabajo compañero
        rápido lento grande pequeño importante fácil difícil posible""",
    "ru": """и в не на что с как это по но из у за от для о же так мы вы я ты он она они
        если когда почему где уже ещё только очень больше сегодня завтра вчера неделя год
        время вопрос ответ проблема решение пример шаг причина идея план проект база данных
        запрос резервная копия сервер служба приложение ошибка журнал память файл папка
        ключ сессия пользователь аккаунт пароль счёт клиент встреча срок сад рецепт ужин
        путешествие рейс гостиница поезд билет музей книга глава история стихотворение
        письмо резюме черновик язык грамматика предложение смысл наука физика математика
        уравнение доказательство здоровье сон кофе хлеб сыр погода дождь зима лето отпуск
        день рождения семья друг ребёнок школа учитель музыка песня фильм улица город дом
        квартира аренда налог страховка работа коллега быстро медленно большой маленький
        важный простой сложный возможный""",
    "ja": """私 あなた これ それ 今日 明日 昨日 週 年 時間 質問 答え 問題 解決 例 手順
        理由 考え 計画 プロジェクト データベース クエリ バックアップ サーバー サービス
        アプリ エラー ログ メモリ ファイル フォルダ 鍵 セッション ユーザー アカウント
        パスワード 請求書 顧客 会議 予定 締め切り 庭 レシピ 夕食 旅行 飛行機 ホテル 電車
        切符 美術館 本 章 物語 詩 手紙 要約 下書き 言語 文法 文 意味 科学 物理 数学 方程式
        証明 健康 睡眠 コーヒー パン チーズ 天気 雨 冬 夏 休暇 誕生日 家族 友達 子供 学校
        先生 音楽 歌 映画 道 町 家 部屋 家賃 税金 保険 仕事 同僚 速い 遅い 大きい 小さい
        大切 簡単 難しい""",
}
JA_PARTICLES = ["は", "が", "を", "に", "で", "と", "の", "も", "から", "まで"]
JA_ENDINGS = ["です。", "ます。", "でしょうか。", "ですね。", "と思います。", "してください。"]
# The share of conversations in each language: mostly English, as in a real export.
LANGUAGES = {"en": 0.62, "de": 0.09, "fr": 0.08, "es": 0.08, "ru": 0.07, "ja": 0.06}
# Names, products and jargon that cross languages (and make good queries).
TERMS = ["Postgres", "Redis", "Kubernetes", "Docker", "nginx", "Grafana", "Prometheus",
         "Terraform", "Rust", "Python", "TypeScript", "React", "NumPy", "pandas", "SQLite",
         "Kafka", "OAuth", "JWT", "HTTPS", "WebAssembly", "Pyodide", "ONNX", "MiniLM", "BM25",
         "Lisbon", "Kyoto", "Berlin", "Marseille", "Valencia", "Novosibirsk", "Alice", "Bruno",
         "Chiara", "Dmitri", "Emma", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "sourdough",
         "espresso", "marathon", "Riesling", "saffron"]
TITLES = ["Help with {}", "{} question", "Notes on {}", "{} and {}", "Planning {}",
          "Fixing {}", "Ideas for {}", "{} draft", "Understanding {}", "{} vs {}"]
CODE = ["def {a}({b}):\n    return [x for x in {b} if x.{a}]\n",
        "SELECT {a}, count(*) FROM {b} GROUP BY {a} ORDER BY 2 DESC;\n",
        "for {a} in {b}:\n    print({a})\n",
        "const {a} = await fetch(`/api/{b}`).then(r => r.json());\n"]

START = 1_672_531_200.0  # 2023-01-01 UTC, when the generated history begins


@dataclass(slots=True)
class ExportStats:
    """What :func:`make_export` put in a document: the figures the importer should find."""

    conversations: int = 0
    messages: int = 0  # visible user and assistant messages (the importer keeps these)
    branch_points: int = 0  # nodes with more than one child
    long_messages: int = 0  # messages of 2,000 characters or more
    longest: int = 0  # characters of the longest message
    characters: int = 0  # characters of all visible messages
    text_bytes: int = 0  # their UTF-8 bytes: the raw text a palace holds
    skipped_nodes: int = 0  # hidden system nodes the importer leaves out
    code_runs: int = 0  # python calls with their output: two more messages each, kept
    languages: Counter = field(default_factory=Counter)  # conversations a language

    def to_dict(self) -> dict[str, Any]:
        """Return the figures as a JSON-ready dict."""
        return {"conversations": self.conversations, "messages": self.messages,
                "branch_points": self.branch_points, "long_messages": self.long_messages,
                "longest_chars": self.longest, "characters": self.characters,
                "text_bytes": self.text_bytes,
                "skipped_nodes": self.skipped_nodes, "code_runs": self.code_runs,
                "languages": dict(self.languages)}


class _Writer:
    """Text in one language, drawn from its word list with a per-conversation topic."""

    def __init__(self, rng: random.Random, lang: str) -> None:
        self.rng = rng
        self.lang = lang
        self.words = WORDS[lang].split()
        # A conversation keeps coming back to a few words and terms: its topic.
        self.topic = rng.sample(self.words, 4) + rng.sample(TERMS, 2)

    def word(self) -> str:
        r = self.rng.random()
        if r < 0.12:
            return self.rng.choice(self.topic)
        if r < 0.15:
            return self.rng.choice(TERMS)
        return self.rng.choice(self.words)

    def sentence(self) -> str:
        n = self.rng.randint(5, 16)
        if self.lang == "ja":
            body = "".join(self.word() + self.rng.choice(JA_PARTICLES) for _ in range(n // 2))
            return body + self.word() + self.rng.choice(JA_ENDINGS)
        words = [self.word() for _ in range(n)]
        words[0] = words[0][:1].upper() + words[0][1:]
        return " ".join(words) + self.rng.choice([".", ".", ".", "?", "!"])

    def text(self, chars: int) -> str:
        """Return text of about ``chars`` characters: paragraphs, and in long texts now and
        then a list or a code block, as assistants write."""
        out: list[str] = []
        size = 0
        while size < chars:
            r = self.rng.random()
            if chars > 600 and r < 0.08:
                a, b = self.rng.choice(self.words), self.rng.choice(TERMS).lower()
                block = "```\n" + self.rng.choice(CODE).format(a=a.lower(), b=b) + "```"
            elif chars > 400 and r < 0.18:
                block = "\n".join(f"{i}. {self.sentence()}"
                                  for i in range(1, self.rng.randint(3, 6)))
            else:
                block = " ".join(self.sentence() for _ in range(self.rng.randint(1, 4)))
            out.append(block)
            size += len(block) + 2
        return "\n\n".join(out)


def _length(rng: random.Random, role: str) -> int:
    """Return a message length in characters: log-normal, questions short, answers longer,
    with a long tail (capped at 12,000): answers about as long as a chat model writes them
    (median 1,300 characters), questions from a line to a pasted page."""
    median, sigma = (140, 1.2) if role == "user" else (1_300, 0.8)
    return max(8, min(12_000, int(median * math.exp(rng.gauss(0, sigma)))))


class _Conversation:
    """One conversation's mapping, built node by node."""

    def __init__(self, rng: random.Random, stats: ExportStats, when: float) -> None:
        self.rng = rng
        self.stats = stats
        self.when = when
        self.mapping: dict[str, dict[str, Any]] = {}
        self.root = self._node(None, None)

    def _id(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:]}"

    def _node(self, parent: str | None, message: dict[str, Any] | None) -> str:
        nid = message["id"] if message else self._id()
        self.mapping[nid] = {"id": nid, "message": message, "parent": parent, "children": []}
        if parent is not None:
            children = self.mapping[parent]["children"]
            children.append(nid)
            if len(children) == 2:
                self.stats.branch_points += 1
        return nid

    def message(self, parent: str, role: str, text: str | None = None, *,
                content: dict[str, Any] | None = None, recipient: str = "all",
                metadata: dict[str, Any] | None = None, image: bool = False,
                kept: bool = False) -> str:
        """Add a message node under ``parent``; return its id. A visible text counts into
        the stats; ``image`` puts an uploaded image before the text (multimodal); other
        ``content`` counts as skipped unless ``kept`` (code and its output)."""
        self.when += self.rng.uniform(5, 240)
        if content is None:
            content = {"content_type": "text", "parts": [text]}
            if image:
                content = {"content_type": "multimodal_text", "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": f"file-{self._id()}",
                     "width": 1024, "height": 768}, text]}
            if role in ("user", "assistant") and text:
                self.stats.messages += 1
                self.stats.characters += len(text)
                self.stats.text_bytes += len(text.encode())
                self.stats.longest = max(self.stats.longest, len(text))
                self.stats.long_messages += len(text) >= 2_000
        elif not kept:
            self.stats.skipped_nodes += 1
        message = {"id": self._id(), "author": {"role": role, "name": None, "metadata": {}},
                   "create_time": round(self.when, 3), "update_time": None,
                   "content": content, "status": "finished_successfully",
                   "end_turn": role == "assistant", "weight": 1.0,
                   "metadata": metadata or {}, "recipient": recipient, "channel": None}
        return self._node(parent, message)


def _conversation(rng: random.Random, budget: int, stats: ExportStats, when: float,
                  lang: str) -> dict[str, Any]:
    """Return one ChatGPT conversation in ``lang`` of at most ``budget`` visible messages
    (at least 2), counting them into ``stats``."""
    w = _Writer(rng, lang)
    c = _Conversation(rng, stats, when)
    start = stats.messages
    head = c.message(c.root, "system", "", metadata={"is_visually_hidden_from_conversation":
                                                     True})
    stats.skipped_nodes += 1
    # Turns are pairs, log-normal: most chats are a few turns, a few working sessions run to
    # hundreds (median 10 turns, mean about 18: some 38 messages a conversation, as in the
    # real export of issue 13, 18,492 messages in 491 conversations).
    turns = max(1, min(budget // 2, 400, int(rng.lognormvariate(math.log(10), 1.1))))
    for _ in range(turns):
        if stats.messages - start + 2 > budget:
            break
        question = c.message(head, "user", w.text(_length(rng, "user")),
                             image=rng.random() < 0.04)
        if rng.random() < 0.05 and stats.messages - start + 3 <= budget:  # edited question
            question = c.message(head, "user", w.text(_length(rng, "user")))
        parent = question
        if rng.random() < 0.05:  # a tool round-trip before the answer
            n = len(c.mapping)  # a different program each time, drawing nothing from rng
            call = c.message(parent, "assistant", recipient="python", kept=True, content={
                "content_type": "code", "language": "python", "text": f"print({n})"})
            parent = c.message(call, "tool", kept=True, content={
                "content_type": "execution_output", "text": str(n)})
            stats.code_runs += 1
        answer = c.message(parent, "assistant", w.text(_length(rng, "assistant")))
        if rng.random() < 0.07 and stats.messages - start + 1 <= budget:  # regenerated
            answer = c.message(parent, "assistant", w.text(_length(rng, "assistant")))
        head = answer
    subject = rng.choice(w.topic)
    title = rng.choice(TITLES).format(subject, rng.choice(TERMS))
    stats.conversations += 1
    stats.languages[lang] += 1
    cid = c._id()
    return {"title": title, "create_time": round(when, 3), "update_time": round(c.when, 3),
            "mapping": c.mapping, "moderation_results": [], "current_node": head,
            "plugin_ids": None, "conversation_id": cid, "conversation_template_id": None,
            "gizmo_id": None, "is_archived": False, "safe_urls": [],
            "default_model_slug": "gpt-4o", "id": cid}


def make_export(messages: int, seed: int = 0) -> tuple[list[dict[str, Any]], ExportStats]:
    """Return ``(conversations, stats)``: a ChatGPT export holding exactly ``messages``
    visible user and assistant messages (at least 2), and what it holds. The same arguments
    give the same document; the first conversations take each language once, then they
    follow :data:`LANGUAGES`. Cost: about 10 µs a generated word; 20,000 messages make about
    23 MB of text in about five seconds."""
    rng = random.Random(seed)
    stats = ExportStats()
    out: list[dict[str, Any]] = []
    when = START
    total = max(2, messages)
    # Every language once first (in a seeded order), so that a small export has them all.
    first = rng.sample(list(LANGUAGES), len(LANGUAGES))
    while stats.messages < total:
        left = total - stats.messages
        lang = first.pop() if first else rng.choices(list(LANGUAGES),
                                                     weights=list(LANGUAGES.values()))[0]
        if left == 1:  # a last answer alone would need a question: regenerate one instead
            out.append(_conversation(rng, 2, stats, when, lang))
            _drop_one(out[-1], stats)
            break
        out.append(_conversation(rng, left, stats, when, lang))
        when += rng.uniform(600, 3 * 86_400)
    return out, stats


def _drop_one(conv: dict[str, Any], stats: ExportStats) -> None:
    """Remove the last answer of ``conv`` (two messages where one was wanted)."""
    last = conv["current_node"]
    node = conv["mapping"].pop(last)
    parent = node["parent"]
    conv["mapping"][parent]["children"].remove(last)
    conv["current_node"] = parent
    text = node["message"]["content"]["parts"][-1]
    stats.messages -= 1
    stats.characters -= len(text)
    stats.text_bytes -= len(text.encode())
    stats.long_messages -= len(text) >= 2_000


def conversation_texts(messages: int, seed: int = 0
                       ) -> list[list[tuple[str, str, str, float]]]:
    """Return, for each conversation of :func:`make_export`'s export, the (wing, room, text,
    time) of each user or assistant message with text: wing ``w<i mod 12>``, room ``c<i>``,
    what the benchmarks that build a palace straight from the generator store. Cost: the
    export's generation plus one pass over it."""
    conversations, _ = make_export(messages, seed)
    out = []
    for i, conv in enumerate(conversations):
        rows = []
        for node in conv["mapping"].values():
            msg = node.get("message")
            if not msg or msg["author"]["role"] not in ("user", "assistant"):
                continue
            parts = [p for p in msg["content"].get("parts", []) if isinstance(p, str)]
            text = "\n".join(parts).strip()
            if text:
                rows.append((f"w{i % 12}", f"c{i:05d}", text,
                             float(msg.get("create_time") or 0)))
        out.append(rows)
    return out


def write_export(path: Path, messages: int, seed: int = 0) -> ExportStats:
    """Write :func:`make_export`'s document to ``path`` (UTF-8 JSON, non-ASCII kept, as
    ChatGPT writes it); return its stats. Cost: the generation plus one JSON dump."""
    conversations, stats = make_export(messages, seed)
    Path(path).write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
    return stats


def queries(conversations: list[dict[str, Any]], count: int, seed: int = 0) -> list[str]:
    """Return ``count`` search queries of two to four words taken from messages of
    ``conversations`` (so each has drawers to find), the same for the same seed. Cost: one
    pass over the nodes."""
    rng = random.Random(seed + 1)
    texts = [n["message"]["content"]["parts"][-1] for c in conversations
             for n in c["mapping"].values()
             if n["message"] and n["message"]["author"]["role"] in ("user", "assistant")
             and n["message"]["content"]["content_type"] in ("text", "multimodal_text")
             and n["message"]["content"]["parts"][-1]]
    out: list[str] = []
    while len(out) < count and texts:
        text = rng.choice(texts)
        words = [w.strip(".,?!:`()[]") for w in text.split()]
        words = [w for w in words if len(w) > 3 and w.isalpha()]
        if len(words) < 2:  # Japanese (no spaces): a stretch of the sentence instead
            sentence = text[:200].split("。")[0]
            if len(sentence) >= 6:
                i = rng.randrange(0, max(1, len(sentence) - 8))
                out.append(sentence[i:i + 8])
            continue
        out.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
    return out
