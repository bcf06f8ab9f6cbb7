"""Cue phrases: which sentences of a conversation state a decision, a question, a next step,
a conclusion, a lesson or a price, in English and Chinese (simplified and traditional).

The offline pipeline has no model to ask, so it reads the phrasing people actually use
("let's go with", "instead of", "决定", "改用", "下一步", "是否"…). Cues are deliberately
conservative: a missed decision costs less than a board full of noise. A plain directive
("use fnv1a hashes") decides only when the user opens a prompt with it, and not when it
points at something, names a tool for one task, or tells of a failure.
"""

from __future__ import annotations

import re

from memvault.triggers import recognise

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_TAG = re.compile(r"<(timestamp|system-reminder)>.*?</\1>|</?[a-z_-]+>", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s+")
# A sentence ends at . ! ? followed by a space, at CJK end punctuation, or at a line break.
_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")

DECISION = re.compile(
    r"\b(?:decided|decide to|decision(?![- ](?:making|tracking|trails?|audit|trees?|logic))|"
    r"we(?:'ll| will) (?:use|go|keep|switch|stick)|"
    r"let's (?:go with|use|keep|stick with|switch)|going with|go with|instead of|"
    r"switch(?:ed)? to|chose|choose to|opt(?:ed)? for|settled on|agreed|"
    r"standardi[sz]e on|from now on|always use|never use|rather than)\b"
    r"|决定|決定|决策|決策|改用|采用|採用|选用|選用|结论|結論|统一用|統一用|统一使用|統一使用|"
    r"一律|以后都|以後都|就用|确定用|確定用|(?<![判确確认認鉴鑒测測规規肯假])(?:定为|定為)|不再用|换成|換成|"
    r"而不是|取代|"
    r"(?:弃用|棄用)(?!警告|问题|問題|提示)",  # not a deprecation warning
    re.IGNORECASE,
)
# A choice the speaker directs, said as an instruction or a polite question: "Use
# ``Path.GetRandomFileName()`` instead.", "can we please use the CommandLineParser library
# for cli handling?", "能不能改用 httpx". Only at the start of a sentence: "the analyzer
# requires ``AnsiConsole`` instead" describes, it does not decide. ("Should we use X?" asks
# for an opinion and stays a question.)
DIRECTION = re.compile(
    r"^(?:please,? |so,? |ok(?:ay)?,? |now,? )?(?:use|switch to|go with|prefer)\b[^?]{1,120}"
    r"\binstead\b"
    r"|^(?:ok(?:ay)?,? |so,? )?(?:can|could) we (?:please |just |also )?(?:use|switch to|move to|"
    r"go with|adopt|replace)\b"
    r"|^(?:能不能|能否|可不可以|可以)(?:改用|换成|換成|换用|換用)",
    re.IGNORECASE,
)
# A choice the user directs in plain words at a prompt's opening: "use fnv1a hashes",
# "please use AppDataStorage for serializing all of our state", "dont use a winget specific
# staging directory", "I would rather infer them from the environment", "用中文回答",
# "不要再用 requests". Only the user's (an agent's "Use the command below" instructs, it
# decides nothing), only among a prompt's opening sentences (``openers``: a pasted
# document's "Use this flag to …" is not theirs), never what it points at ("use this
# workspace", "don't use that"), a tool used for one task ("Use the Done button to close
# the dialog": ``_ONE_TASK``), a noun ("Use of unassigned local variable", "使用率"), nor a
# failure told ("使用 X 指令日志就无法输出", "the upload still fails": ``_FAILS``).
_POINTED = r"(?!(?:it|this|that|these|those|them|the following|the above|one|some|of|after|your)\b)"
DIRECTIVE = re.compile(
    r"^(?:@\S+\s+)*(?:(?:please|pls|so|ok(?:ay)?|now|also|and|just),? )?(?:always )?"
    rf"(?:use|migrate to|adopt|prefer|stick (?:with|to))\s+{_POINTED}"
    rf"|^(?:@\S+\s+)*(?:(?:please|pls),? )?(?:don'?t|do not|never|stop) (?:use|using)\s+{_POINTED}"
    r"|\bi(?: would|'d) rather (?!you\b|be\b)|^i (?:always|never) want\b"
    # the same said in the first person: "I want to use …", "we should use …", "lets use …"
    r"|^(?:@\S+\s+)*(?:(?:i think|so|ok(?:ay)?|also|and|now),? )?(?:(?:i|we)(?: (?:really "
    r"|also )?want to| need to| would like to|'d like to| should| must|(?: would|'d)? prefer"
    r"(?: to)?)|let'?s(?: not)?|lets(?: not)?|make sure (?:to|you|we)) (?:always )?(?:use|"
    rf"migrate to|switch to|move to|adopt|stick (?:with|to)|go with)\s+{_POINTED}"
    rf"|^(?:@\S+\s+)*(?:i|we)(?: would|'d)? prefer\s+(?!to\b){_POINTED}"
    r"|^(?:@\S+\s+)*(?:请你?|請你?)?(?:统一|統一|一律)?"
    r"(?:使用|改用|改为|改為|改成|用)(?![的者率量法途户戶于於来來过過时時说說情方了到])"
    r"|^(?:@\S+\s+)*(?:请你?|請你?)?(?:不要|别|別|禁止)再?(?:使用|用)",
    re.IGNORECASE,
)
DIRECTED_SENTENCES = 3
_ONE_TASK = re.compile(r"^(?:\S+\s+){1,5}?to (?!be\b)[a-z]+\b", re.IGNORECASE)
# What names no choice: "use the best approach", "use the right tool", "使用最优解".
_VACUOUS = re.compile(
    r"^(?:the |a |an )?(?:best|optimal|right|correct|proper|appropriate|most suitable)\b"
    r"|^(?:最优|最佳|最好|合适|正确|恰当)",
    re.IGNORECASE,
)
_FAILS = re.compile(
    r"无法|無法|不能|不行|报错|報錯|出错|出錯|失败|失敗|doesn'?t work|isn'?t working|"
    r"not working|still fails?|fails? with|failed|throws|crash(?:es|ed)|\berror:",
    re.IGNORECASE,
)
# A decision declared as one, not a choice described in passing ("…, instead of …"): opened
# by a decision label ("Decision: …", "**Decided:** …", "决定：…") or said as made ("we
# decided …", "we'll use X from now on", "我们决定…"). Rule words alone ("from now on",
# "一律") do not declare: "the test should pass from now on" states no decision made.
_CHOICE = r"we(?:'ll| will)? (?:use|keep|go with|stick with|switch to)\b"
DECLARATION = re.compile(
    r"^[*_\s]*(?:(?:design |final |key )?decisions?(?: recorded| made)?|decided)[*_\s]*[:：]"
    r"|\bwe decided\b"
    rf"|\b{_CHOICE}[^.;]*\b(?:from now on|going forward)\b"
    rf"|\b(?:from now on|going forward),? {_CHOICE}"
    r"|^[*_\s]*(?:决定|決定|决策|決策)(?:如下)?[*_\s]*[:：]|我们决定|我們決定",
    re.IGNORECASE,
)
# A decision's words in a sentence that decides nothing: what someone got or saw instead of
# what they expected ("when I run it I get an error instead of …"), a fault described ("is
# incorrectly called with four arguments instead of two"), or a decision still to be made
# ("so I can make a decision about which one to take").
UNDECIDED = re.compile(
    r"\b(?:i|we)(?:'m| am|'re| are)?\s+(?:get|got|getting|see|saw|seeing|receive|received)\b"
    r"[^:;!?,]{0,80}\b(?:instead of|rather than)\b"
    r"|\b(?:incorrectly|wrongly|mistakenly|accidentally|erroneously)\b[^:;!?,]{0,80}"
    r"\b(?:instead of|rather than)\b"
    r"|\bmak(?:e|es|ing) (?:a|an|the|my|our|any)(?: \w+)? decisions?\b(?! to\b)"
    r"|(?:需要|还需|還需|要|待|尚未|还没|還沒|来|來|根据[^，,。；]{0,40}?|根據[^，,。；]{0,40}?)(?:决定|決定)"
    r"|(?:采用|採用)(?:类似|類似|同样|同樣|相同|这种|這種|这样|這樣)的?(?:方式|方法|做法|办法|辦法)",
    re.IGNORECASE,
)
# A contrast ("instead of", "rather than", "而不是", "取代", "弃用") decides only in a
# sentence that makes a choice: the speaker commits ("I'll", "let's", "we should"), directs
# (an opening verb, "use"), prefers or recommends, or tells a change made ("the store now
# keeps …"). Said of what code does ("PowerShell returns $null instead of an empty array",
# "它被一个新的 API 所取代"), it describes a behaviour or a fault.
_CONTRAST = re.compile(r"instead of|rather than|而不是|取代|弃用|棄用", re.IGNORECASE)
_CHOOSES = re.compile(
    r"\b(?:i|we)(?:'ll| will| would|'d| should| shall| must| need to| want to| have to|"
    r"(?:'m| am|'re| are) going to)\b|\blet(?:'s|s| me| us)\b"
    r"|\b(?:should|must|prefer|recommend|suggest|needs? to|better to)\b"
    r"|\b(?:i|we)(?:'ve| have) (?:\w+ly )?(?:switched|changed|replaced|moved|refactored|"
    r"converted|chosen|decided|opted|updated)\b|\buse\b(?! of\b)"
    r"|(?<![.\w])now\b(?!\(| (?:fails?|failing|throws?|crash\w*|breaks?|errors?)\b)"
    r"|^[*_\s]*(?:(?:please|so|now|also|ok(?:ay)?|actually|and|just),?\s+)*(?:@\S+\s+)*"
    r"(?:switch|go|choose|pick|keep|stick|replace|put|make|change|implement|try|integrate|"
    r"create|add|move|call|name|show|display|write|return|store|save|load|run|convert|"
    r"refactor|update|look)\b"
    r"|必须|必須|应该|應該|应当|應當|最好|改为|改為|改成|改用|让我|讓我|我们将|我們將|我会|"
    r"我會|请|請|要用",
    re.IGNORECASE,
)
QUESTION = re.compile(
    r"[?？]\s*$|^(?:should (?:we|i)|do we|can we|how (?:do|should|can)|what if|whether)\b"
    r"|^(?:what|which|why|where|when|who|how) (?:did|do|does|was|were|is|are|have|has)\b"
    r"|(?:怎么|怎麼|如何)[^，,。；]{0,12}的\s*$|(?:哪个|哪個|哪些|哪里|哪裡|什么时候|什麼時候)\s*$"
    r"|\b(?:open question|unclear whether|not sure (?:if|whether)|tbd|to be decided)\b"
    # "看看是否…" (see whether) says what will be checked; "不确定性" is uncertainty.
    r"|(?<!看看)(?<!检查)(?<!檢查)(?<!确认)(?<!確認)(?<!验证)(?<!驗證)是否"
    r"|要不要|能不能|可不可以|该不该|該不該|吗[?？。]?$|嗎[?？。]?$|待定|待确认|待確認"
    r"|^(?:@\S+\s+)*(?:为什么|為什麼|为何|為何)"
    r"|不确定(?!性)|不確定(?!性)",
    re.IGNORECASE,
)
NEXT_STEP = re.compile(
    r"\b(?:next steps?|next up|todo|to-do|follow[- ]up|still needs? to|remaining|left to do|"
    r"later we|afterwards|we should also)\b"
    r"|下一步|待办|待辦|接下来|接下來|之后再|之後再|还需要|還需要|后续|後續|稍后|稍後|回头再|回頭再|明天再",
    re.IGNORECASE,
)
CONCLUSION = re.compile(
    r"\b(?:root cause|turns out|the (?:problem|issue|bug|cause|culprit) (?:is|was)|caused by|"
    r"found that|confirmed|the fix (?:is|was)|fixed by|works now|in conclusion|because)\b"
    r"|结论|結論|原来|原來|根因|原因是|原因在于|原因在於|因为|因為|问题在于|問題在於|导致|導致|发现|發現",
    re.IGNORECASE,
)
LESSON = re.compile(
    r"\b(?:lesson|learned|pitfall|gotcha|watch out|beware|be careful|don't forget|"
    r"remember to|make sure to|never again)\b"
    r"|踩坑|教训|教訓|经验|經驗|切记|切記|记住|記住|别忘|別忘|注意不要|下次",
    re.IGNORECASE,
)
# A decision recalled rather than made: what was decided before, quoted back, or read out of
# memory ("we decided earlier…", "as agreed", "上次決定…", "根據記憶…").
RECALL = re.compile(
    r"\b(?:decided|agreed|chose|settled on|opted for) (?:earlier|before|previously|last time|"
    r"already)\b|\b(?:earlier|before|previously|last time|already),? (?:we|you|i) "
    r"(?:had )?(?:decided|agreed|chose|settled|opted)\b|\b(?:we|you|i) (?:had|have|'d|'ve) "
    r"(?:already )?(?:decided|agreed|chosen|settled)\b|\b(?:we|you|i) already "
    r"(?:decided|agreed|chose|settled)\b|\bas (?:we |you |i )?(?:had |have )?(?:decided|agreed|"
    r"discussed|planned|noted)\b|\b(?:was|were|has been|had been) (?:already )?(?:decided|agreed)"
    r"\b|\baccording to (?:the |your |my |our )?(?:memory|memories|notes|records)\b"
    r"|\b(?:the |a )?(?:saved|stored|recorded|remembered) (?:fragment|decision|memory|note)s?\b"
    r"|\b(?:memory|the fragment|the snapshot) (?:says|said|shows|notes)\b"
    r"|(?:上次|之前|先前|早先|早前|以前|前面|上回|當初|当初|原先|過去|过去)[^，,。；]{0,6}?(?:決定|决定|"
    r"決策|决策|定了|定下|說過|说过|討論|讨论|約定|约定|選|选|採用|采用|改用)"
    r"|(?:已經|已经)(?:決定|决定|定了|約定|约定)過|(?:按照|依照|根據|根据|如同|正如)[^，,。]{0,4}?"
    r"(?:決定|决定|約定|约定|記憶|记忆|紀錄|记录|討論|讨论)|(?:記憶|记忆)(?:中|裡|里|顯示|显示)",
    re.IGNORECASE,
)
# Lines that are not the speaker's own words: a quoted block ("> …"), memvault's report
# lines ("📖 agent memory…", "📋 agent memory…") and the injected context block they open.
_QUOTED = re.compile(r"^\s*>")
_REPORT = re.compile(r"^\s*(?:📖|📋)\s*agent memory", re.IGNORECASE)
_BLOCK_HEADING = re.compile(r"^\s*#{1,6}\s")
_BLOCK_LINE = re.compile(r"^\s*(?:[-*+]\s|\(not enough\?)")
_MARK = re.compile(r"^[^\w\s*_`(（]+\s*")  # a check mark or an emoji before the words
# A question that asks for something to be done ("…, can you fix it?", "能不能幫我…").
_REQUEST = re.compile(
    r"\b(?:can|could|would|will) you\b|\bplease\b|^\s*(?:fix|add|make|change|update|remove|"
    r"write|implement|refactor|rename|move|run)\b"
    r"|能不能|能否|可不可以|可以(?:幫|帮)|(?:幫|帮)我|請|请|麻煩|麻烦",
    re.IGNORECASE,
)
# A report of what was just done ("已修复：改用 scp…", "Switched to scp; tests pass"): the
# decision behind it was made, and recorded, earlier.
REPORT = re.compile(
    r"^(?:已经?|已經)?(?:修复|修復|完成|搞定|改好)|^(?:fixed|done|renamed|updated|changed|switched|"
    r"replaced|moved)\b",
    re.IGNORECASE,
)
# Words a reply's sentence may open with before what it says ("Now, …", "OK, …").
_OPENER = (
    r"(?:(?:now|so|ok(?:ay)?|alright|ah|aha|great|but|however)\b[,，]?\s*"
    r"|(?:首先|现在|現在|好的|那么|那麼|接下来|接下來|然后|然後|下面)[,，]?\s*)"
)
# Narration of what the agent is about to do; says nothing about the outcome.
NARRATION = re.compile(
    rf"^{_OPENER}?"
    r"(?:now that i understand[^,]{0,40},\s*)?(?:let me|let's (?:check|look|see|start|read|run)|"
    r"i'll|i will|i'm going to|now i|first,? i|reading|checking|looking|listing|让我|讓我|我来|"
    r"我來|我先|先看|先读|先讀|i need to (?:find|look|check|see|understand|investigate|examine|"
    r"analy[sz]e|figure out|review|locate|identify|inspect|explore)\b|我需要(?:查看|检查|檢查|"
    r"分析|了解|确认|確認|看看|找到|找出|研究))",
    re.IGNORECASE,
)
# The agent offering more ("Would you like me to…?", "您需要我…吗？"): a question for
# politeness, not one the session leaves open.
_OFFER = re.compile(
    r"^(?:(?:or|and|also|so),?\s+)?(?:would you like|do you want|shall i|want me to|"
    r"what would you like|"
    r"is there anything else|anything else)\b|(?:您|你)?(?:需要|想要|希望)我(?!们|們)|要不要我|"
    r"是否需要我",
    re.IGNORECASE,
)
CHATTER = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|yes|no|yep|nope|sure|great|cool|nice|"
    r"continue|go on|go ahead|proceed|done|good|你好|您好|嗨|谢谢|謝謝|好的|好|嗯|对|對|"
    r"继续|繼續|可以|行|没问题|沒問題)[\s!.。！,，~]*$",
    re.IGNORECASE,
)
# A reply's exclamation or agreement that says nothing of the work on its own ("Perfect!",
# "You're absolutely right!", "太好了！"): what the agent concluded is elsewhere.
_FILLER = re.compile(
    r"^(?:(?:you(?:'re| are)\s+)?(?:absolutely\s+|completely\s+|exactly\s+)?right|"
    r"(?:perfect|great|excellent|good|nice|awesome|wonderful|fantastic|amazing|interesting|"
    r"exactly|indeed|brilliant|splendid)(?:\s+(?:catch|question|point|idea|news))?|got it|"
    r"完美|太好了|很好|非常好|好极了|好極了|没错|沒錯|你说得对|你說得對|您说得对|您說得對)"
    r"[\s!.。！,，~]*$",
    re.IGNORECASE,
)
_NOT_A_TASK = re.compile(
    r"^\s*(?:/|<local-command|<command-name>|\[request interrupted|"
    r"this session is being continued|caveat:)",
    re.IGNORECASE,
)
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:ok(?:ay)?|sure|done|got it|好的|好|行|可以|没问题|沒問題)[\s,，!！.。]+", re.IGNORECASE
)
# A clause that only announces a finding ("The issue is clear now:", "我发现了问题，"): the
# finding is what follows it, and alone it says nothing. It ends the sentence or a clause.
_ANNOUNCED = (
    r"(?:i (?:can )?(?:now )?see|i(?:'ve| have)? found|i understand|i(?:'ve| have)? "
    r"(?:identified|spotted))\s+(?:now\s+)?(?:the|what the)\s+(?:main |root |real )?"
    r"(?:issue|problem|bug|cause|culprit)(?:\s+is)?(?:\s+now)?"
    r"|(?:the|this)\s+(?:main |root |real )?(?:issue|problem|bug|cause|culprit)\s+(?:is|was)\s+"
    r"(?:now\s+)?(?:clear|obvious|apparent|evident|found|identified|fixed|resolved|solved)"
    r"(?:\s+now)?"
    r"|found (?:it|the (?:issue|problem|bug))|找到了"
    r"|(?:但是|但|不过|不過)?(?:(?:现在|現在)[，,]?\s*)?我?(?:发现|發現|找到)了?(?:另?一个|另?一個)?"
    r"(?:重要|关键|關鍵)?的?(?:问题|問題|原因|根因)(?:的(?:根本|真正)?(?:原因|根因))?(?:所在)?了?"
    r"|(?:但是|但|不过|不過)?(?:问题|問題)就?(?:在于|在於)"
    r"|(?:问题|問題)的?(?:根本|真正)?(?:原因|根因)(?:是|在于|在於)?"
    r"|(?:基于|基於|根据|根據)以上的?(?:发现|發現|分析)"
    r"|(?:现在|現在)?(?:问题|問題)的?(?:根因|原因)?(?:已经|已經)?(?:完全)?(?:清楚|明确|明確)了"
)
_ANNOUNCEMENT = re.compile(
    rf"^{_OPENER}*(?:{_ANNOUNCED})"
    r"\s*(?:[:：,，!！.。]+\s*|$)",
    re.IGNORECASE,
)
# Where an issue is, by line number alone: says nothing without the code it points at.
_LINE_ONLY = re.compile(
    r"^(?:i (?:can )?see (?:that )?)?(?:the|this) (?:issue|problem|bug|error) (?:is|was) "
    r"(?:on|at|in) lines? \d+(?:\s*[-–]\s*\d+)?$",
    re.IGNORECASE,
)
# A label before a colon that introduces the decision itself: "Decision: …", "已记录：…".
_LABEL = re.compile(
    r"(?:decision|decided|conclusion|noted|recorded|summary|决定|決定|决策|決策|结论|結論|"
    r"记录|記錄|记下|記下|笔记|筆記)[^:：]{0,12}[:：]\s*",
    re.IGNORECASE,
)


def is_cjk(text: str) -> bool:
    """Whether ``text`` reads as Chinese: a good share of its letters are ideographs."""
    ideographs = len(_CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return ideographs > 0 and ideographs * 3 >= latin


def clean(text: str) -> str:
    """Prose only: no code blocks, no host wrapper tags, whitespace collapsed per line."""
    text = _TAG.sub(" ", _FENCE.sub(" ", text))
    return "\n".join(" ".join(line.split()) for line in text.splitlines()).strip()


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, bullets and headings stripped, empties dropped."""
    found = []
    # Each line's bullet goes first: a numbered item's "1. " ends no sentence.
    for line in clean(text).split("\n"):
        for piece in _SPLIT.split(_BULLET.sub("", line)):
            sentence = piece.strip()
            if len(sentence) > 1:
                found.append(sentence)
    return found


def statement(sentence: str) -> str:
    """The statement a sentence carries, without an introducing label ("已记录：X" → X) or
    an announcement ("The issue is clear now: X" → X)."""
    match = _LABEL.search(sentence)
    if match and len(sentence) - match.end() >= 4:
        sentence = sentence[match.end() :]
    match = _ANNOUNCEMENT.match(sentence.strip())
    if match and len(sentence.strip()) - match.end() >= 4:
        said = sentence.strip()[match.end() :]
        sentence = said[:1].upper() + said[1:]
    return sentence.strip().strip("`").rstrip("。.；;:：").strip()


def says_nothing(statement: str) -> bool:
    """Whether a statement (``statement``'s) names nothing on its own: only an
    announcement ("The issue is clear now") or an issue placed by line number alone."""
    said = _bare(statement)
    return bool(_ANNOUNCEMENT.fullmatch(said) or _LINE_ONLY.match(said))


def is_filler(sentence: str) -> bool:
    """Whether a reply's sentence says nothing of the work on its own: an exclamation or
    agreement ("Perfect!", "You're absolutely right!"), a bare acknowledgement, or only
    an announcement (``says_nothing``)."""
    bare = _bare(sentence)
    return bool(_FILLER.match(bare) or CHATTER.match(bare)) or says_nothing(sentence)


def introduces(sentence: str) -> bool:
    """Whether a sentence ends by introducing what follows it ("…, it means:", "**Root
    cause:**"): a finding worded so holds none of it. (A decision may end so and still be
    whole: "Use X instead of Y:" before the code that does it.)"""
    return _bare(sentence).endswith((":", "："))


def _bare(text: str) -> str:
    text = _MARK.sub("", text.strip())  # "✅ 发现的问题" is "发现的问题"
    return text.strip("*_` ").rstrip("!！.。").strip("*_` ")


def unlabelled(sentence: str) -> str:
    """What follows an introducing label, however short ("結論：是的" → "是的")."""
    match = _LABEL.search(sentence)
    return sentence[match.end() :] if match else sentence


def without_acknowledgement(sentence: str) -> str:
    """ "好的，已记录：X" reads better as "已记录：X" once it is no longer a reply."""
    return _ACKNOWLEDGEMENT.sub("", sentence) or sentence


def own_words(text: str) -> str:
    """``text`` without what the speaker only passes on: quoted blocks, memvault's report
    lines and the context block one opens (its headings and the items under them)."""
    kept: list[str] = []
    state = ""  # "report": after a report line; "block": inside the context block
    for line in text.split("\n"):
        if _REPORT.match(line):
            state = "report"
            continue
        if state and not line.strip():
            continue
        if state and _BLOCK_HEADING.match(line):
            state = "block"
            continue
        if state == "block" and _BLOCK_LINE.match(line):
            continue
        state = ""
        if not _QUOTED.match(line):
            kept.append(line)
    return "\n".join(kept)


def is_decision(sentence: str, *, opening: bool = False) -> bool:
    """Whether ``sentence`` states a decision. ``opening``: it is the user's own, among a
    prompt's first ``DIRECTED_SENTENCES``, where a plain directive decides too
    (``is_directive``)."""
    if DIRECTION.match(sentence) or (opening and is_directive(sentence)):
        return not is_recall(sentence)
    return bool(DECISION.search(sentence)) and not (
        is_question(sentence)
        or REPORT.match(sentence)
        or is_recall(sentence)
        or _decides_nothing(sentence)
        or _only_contrasts(sentence)
    )


def is_directive(sentence: str) -> bool:
    """Whether ``sentence`` directs a choice in plain words (``DIRECTIVE``, ``_ONE_TASK``,
    ``_FAILS``): a decision when the user says it at a prompt's opening."""
    said = _straight(sentence).strip().lstrip("*_ ")
    found = DIRECTIVE.search(said)
    if found is None or is_question(said) or _FAILS.search(said):
        return False
    chosen = said[found.end() :]
    if _VACUOUS.match(chosen):
        return False
    return found.start() > 0 or not _ONE_TASK.match(chosen)


def _straight(sentence: str) -> str:
    """``sentence`` with its apostrophes straight, as the cues spell "we'll" and "let's"."""
    return sentence.replace("\u2019", "'")


def openers(prompt: str) -> frozenset[str]:
    """The sentences of a user's ``prompt`` that may direct a choice plainly
    (``is_decision``'s ``opening``): its own words' first ``DIRECTED_SENTENCES``, whichever
    way a caller reads the prompt's sentences; none of a prompt that is no task."""
    return frozenset(sentences(own_words(prompt))[:DIRECTED_SENTENCES] if is_task(prompt) else ())


def _decides_nothing(sentence: str) -> bool:
    """Whether every decision word of ``sentence`` is in a part that decides nothing
    (``UNDECIDED``), and it declares no decision: "so I can make a decision about which to
    take" decides nothing, "we need to make a decision about caching: we'll use Redis" does."""
    spans = [match.span() for match in UNDECIDED.finditer(sentence)]
    if not spans or DECLARATION.search(sentence):
        return False
    return all(
        any(start <= found.start() and found.end() <= end for start, end in spans)
        for found in DECISION.finditer(sentence)
    )


def _only_contrasts(sentence: str) -> bool:
    """Whether ``sentence``'s decision words are contrasts alone (``_CONTRAST``), and it
    makes no choice (``_CHOOSES``)."""
    return not _CHOOSES.search(_straight(sentence)) and all(
        _CONTRAST.fullmatch(found.group()) for found in DECISION.finditer(sentence)
    )


def declares(decision: str) -> bool:
    """Whether a sentence ``is_decision`` reads as a decision declares it as one, rather
    than stating it in passing."""
    return bool(DECLARATION.search(decision))


def is_recall(sentence: str) -> bool:
    """Whether a sentence recalls a decision made before rather than making one."""
    return bool(RECALL.search(sentence))


def is_request(sentence: str) -> bool:
    """Whether a sentence, a question perhaps, asks for something to be done."""
    return bool(_REQUEST.search(sentence))


def is_question(sentence: str) -> bool:
    return bool(QUESTION.search(sentence))


def is_offer(sentence: str) -> bool:
    return bool(_OFFER.search(sentence))


def is_next_step(sentence: str) -> bool:
    return bool(NEXT_STEP.search(sentence)) and not is_question(sentence)


def is_conclusion(sentence: str) -> bool:
    return bool(CONCLUSION.search(sentence)) and not is_question(sentence)


def is_lesson(sentence: str) -> bool:
    return bool(LESSON.search(sentence)) and not is_question(sentence)


def is_narration(sentence: str) -> bool:
    return bool(NARRATION.match(sentence))


def is_chatter(text: str) -> bool:
    """A greeting, thanks or bare acknowledgement: no task in it."""
    return not text.strip() or bool(CHATTER.match(text.strip()))


def is_task(prompt: str) -> bool:
    """Whether a prompt asks for something, rather than greeting, acknowledging, running a
    slash command or naming a board operation."""
    return not (
        is_chatter(clean(prompt)) or _NOT_A_TASK.match(prompt) or recognise(prompt) is not None
    )
