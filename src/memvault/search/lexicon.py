"""The code-domain bilingual lexicon: what a request in Chinese is also asked in English,
and the reverse.

A developer's memory is often in one language and a request in the other: sessions held in
English (code names, error messages), a question asked in Chinese. ``lexicon_zh_en.tsv``
pairs the words developers use about code (测试/test, 数据库/database, 超时/timeout, …). A
request's words found in it bring the other language's words of the same entry, as
*alternatives*: optional phrases the search counts at a lower weight than the request's
own words (``search/lexical.py``). Traditional characters are read through a table of the
characters the lexicon uses, so 資料庫, 數據庫 and 数据库 all find the same entry, and an
English word brings each of those spellings.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

from memvault.analyzer import tokens

# Traditional → Simplified for the characters of the lexicon's Chinese words, as pairs. A
# Simplified character with two Traditional forms lists the one software writing uses first
# (發 before 髮): a lexicon word is spelled in Traditional with the first.
_TRADITIONAL_PAIRS = (
    "業业 丟丢 臨临 舉举 義义 書书 爭争 產产 從从 倉仓 優优 會会 傳传 偽伪 體体 儲储 關关 內内 "
    "冊册 寫写 衝冲 沖冲 準准 湊凑 擊击 劃划 則则 創创 刪删 別别 製制 務务 動动 區区 協协 單单 "
    "歷历 曆历 壓压 參参 發发 髮发 變变 號号 後后 啟启 響响 問问 國国 圖图 壞坏 塊块 執执 處处 "
    "備备 複复 復复 頭头 夾夹 實实 審审 對对 尋寻 導导 爾尔 嘗尝 層层 屬属 帳帐 並并 併并 庫库 "
    "應应 異异 開开 彈弹 歸归 當当 錄录 徑径 憶忆 態态 總总 懶懒 戶户 擴扩 報报 擬拟 掛挂 損损 "
    "換换 據据 斷断 無无 時时 顯显 暫暂 雜杂 權权 條条 構构 標标 棧栈 欄栏 樹树 樣样 樁桩 檢检 "
    "檔档 機机 沒没 洩泄 測测 瀏浏 滾滚 濾滤 潰溃 點点 狀状 環环 現现 畫画 監监 蓋盖 盤盘 碼码 "
    "穩稳 競竞 篩筛 簽签 類类 係系 繫系 約约 級级 線线 組组 終终 結结 絡络 續续 緩缓 編编 縮缩 "
    "網网 聯联 腳脚 節节 範范 裝装 計计 訂订 認认 議议 訊讯 記记 設设 訪访 證证 評评 詞词 譯译 "
    "試试 話话 詢询 語语 誤误 請请 讀读 調调 負负 敗败 賬账 帳账 賴赖 蹤踪 轉转 軟软 載载 較较 "
    "輯辑 輸输 邊边 達达 遷迁 過过 運运 還还 進进 遠远 連连 遲迟 選选 遞递 郵邮 釋释 鑰钥 鉤钩 "
    "鈕钮 鏈链 銷销 鎖锁 錯错 鍵键 鏡镜 長长 閃闪 閉闭 間间 閱阅 隊队 階阶 際际 隱隐 頁页 項项 "
    "頓顿 預预 頸颈 題题 額额 風风 飾饰 餅饼 驗验 鑒鉴 鑑鉴 規规 覽览 觀观 補补 廠厂 佔占 雙双 "
    "員员 圍围 場场 聲声 夠够 寶宝 寬宽 將将 幣币 師师 帶带 幫帮 廣广 廢废 棄弃 張张 徹彻 惡恶 "
    "慣惯 戰战 掃扫 擾扰 擁拥 擇择 擋挡 擺摆 數数 鬥斗 舊旧 術术 殺杀 來来 極极 歡欢 氣气 匯汇 "
    "彙汇 潔洁 溫温 灣湾 滿满 滅灭 燈灯 靈灵 爛烂 熱热 愛爱 礎础 確确 礙碍 離离 種种 積积 稱称 "
    "筆笔 簡简 糾纠 紀纪 純纯 納纳 紙纸 練练 細细 紹绍 經经 繞绕 給给 絕绝 統统 繼继 維维 綜综 "
    "職职 勝胜 髒脏 臟脏 腦脑 薦荐 獲获 虛虚 慮虑 視视 覺觉 觸触 討讨 讓让 講讲 論论 識识 "
    "訴诉 該该 詳详 說说 誰谁 譜谱 貝贝 貨货 質质 費费 貼贴 資资 趕赶 輪轮 輕轻 這这 違违 邏逻 "
    "裡里 裏里 針针 錢钱 銀银 門门 險险 隨随 難难 須须 頂顶 順顺 領领 頻频 驅驱 齊齐 龍龙 車车 "
    "軌轨 據据 寬宽 啟启 測测 臺台 颱台 檯台 億亿 亂乱 兩两 價价 們们 傷伤 僅仅 優优 剛刚 劑剂 "
    "勢势 匯汇 卻却 廳厅 縣县 嚴严 壓压 夢梦 專专 屆届 島岛 庫库 復复 戲戏 據据 擴扩 斂敛 暢畅 "
    "條条 楊杨 樂乐 歲岁 準准 滯滞 漢汉 濟济 煉炼 獨独 異异 療疗 盡尽 確确 窮穷 競竞 築筑 糧粮 "
    "緊紧 縱纵 織织 罰罚 習习 聽听 腳脚 興兴 舉举 蘭兰 虧亏 號号 蟲虫 衛卫 複复 覆复 親亲 觀观 "
    "託托 設设 診诊 詩诗 誌志 認认 誕诞 謝谢 證证 豐丰 貓猫 賣卖 質质 購购 贊赞 跡迹 躍跃 輔辅 "
    "辦办 遺遗 鄉乡 醫医 鐘钟 鐵铁 開开 闆板 陽阳 陣阵 隻只 雖虽 雲云 電电 韓韩 頻频 顏颜 願愿 "
    "飛飞 飯饭 館馆 馬马 驟骤 體体 鬆松 魚鱼 鳥鸟 麗丽 麵面 黃黄 齡龄 於于 後后 範范 啓启 "
    "盡尽 碟碟 憑凭 畫画 區区 瀏浏 覽览 陳陈 錄录 遞递 迴回 註注"
)
_TO_SIMPLIFIED: dict[str, str] = {}
_TO_TRADITIONAL: dict[str, str] = {}
for _pair in _TRADITIONAL_PAIRS.split():
    _TO_SIMPLIFIED[_pair[0]] = _pair[1]
    if _pair[0] != _pair[1]:
        _TO_TRADITIONAL.setdefault(_pair[1], _pair[0])
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# A long request (a pasted log) could match dozens of entries; the first this many
# alternatives are asked, in the order the request names them.
MAX_ALTERNATIVES = 48


def simplified(text: str) -> str:
    """``text`` with the Traditional characters the table knows written in Simplified."""
    return "".join(_TO_SIMPLIFIED.get(char, char) for char in text)


def traditional(text: str) -> str:
    """``text`` with each Simplified character the table knows in its first Traditional
    form (the table is the lexicon's characters, not a general converter)."""
    return "".join(_TO_TRADITIONAL.get(char, char) for char in text)


def in_chinese(text: str) -> bool | None:
    """Whether ``text`` is written mostly in Chinese characters rather than Latin words, a
    character counted as a word; None for text of neither."""
    chinese = sum(len(run) for run in _CJK_RUN.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    if not chinese and not latin:
        return None
    return chinese >= latin


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the lexicon, analyzed: each word as the phrase of index terms it is."""

    english: tuple[tuple[str, ...], ...]
    chinese: tuple[tuple[str, ...], ...]  # Simplified, Taiwan's words, Traditional spellings


@dataclass(frozen=True, slots=True)
class Concept:
    """What a request names in the lexicon: the terms it says it with, the entry's words
    in the other language, and (for a Chinese word) the entry's other Chinese spellings."""

    said: tuple[str, ...]
    other: tuple[tuple[str, ...], ...]
    spellings: tuple[tuple[str, ...], ...]
    # Every way a memory may hold it but the request's own: read for every candidate the
    # floor weighs, so made once.
    others: tuple[tuple[str, ...], ...] = field(init=False)

    def __post_init__(self) -> None:
        ways = dict.fromkeys([*self.other, *self.spellings])
        object.__setattr__(self, "others", tuple(p for p in ways if p != self.said))

    @property
    def words(self) -> tuple[tuple[str, ...], ...]:
        """Every way a memory may hold it, the request's own first."""
        return (self.said, *self.others)


class Lexicon:
    """Entries looked up by their English words (as analyzed phrases) and their Chinese
    words (in Simplified characters, found anywhere in a run of Chinese)."""

    def __init__(self, lines: list[str]):
        self.entries: list[Entry] = []
        self._english: dict[tuple[str, ...], list[int]] = {}
        self._chinese: dict[str, list[int]] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            english, tab, chinese = line.rstrip("\n").partition("\t")
            if not tab or not english.strip() or not chinese.strip():
                raise ValueError(f"lexicon line {number}: want English<TAB>Chinese: {line!r}")
            index = len(self.entries)
            phrases = _phrases(english.split("|"))
            words = [w.strip() for w in chinese.split("|") if w.strip()]
            spellings = [*words, *(traditional(w) for w in words)]
            self.entries.append(Entry(phrases, _phrases(spellings)))
            for phrase in phrases:
                self._english.setdefault(phrase, []).append(index)
            for word in words:
                self._chinese.setdefault(simplified(word), []).append(index)
        self._longest_english = max((len(p) for p in self._english), default=0)
        self._longest_chinese = max((len(w) for w in self._chinese), default=0)

    def concepts(self, text: str, own: tuple[str, ...]) -> list[Concept]:
        """Each entry ``text`` names, as the request's own words for it (the terms it was
        named by) and the entry's other words: those named in Chinese first, then those
        named in English, each in the order the text names them."""
        chinese = [
            Concept(said, self.entries[index].english, self.entries[index].chinese)
            for index, said in self._named_in_chinese(text).items()
        ]
        english = [
            Concept(said, self.entries[index].chinese, ())
            for index, said in self._named_in_english(own).items()
        ]
        return chinese + english

    def _named_in_chinese(self, text: str) -> dict[int, tuple[str, ...]]:
        """The entries named by a Chinese word of ``text``, each with the terms that word
        is indexed as (its character pairs, in the text's own script)."""
        named: dict[int, tuple[str, ...]] = {}
        for run in _CJK_RUN.findall(unicodedata.normalize("NFKC", text)):
            folded = simplified(run)
            for start in range(len(run)):
                for end in range(start + 2, min(len(run), start + self._longest_chinese) + 1):
                    for index in self._chinese.get(folded[start:end], []):
                        named.setdefault(index, tuple(tokens(run[start:end])))
        return named

    def _named_in_english(self, terms: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
        """The entries named by a phrase of ``terms``, each with that phrase."""
        named: dict[int, tuple[str, ...]] = {}
        for start in range(len(terms)):
            for size in range(1, self._longest_english + 1):
                said = terms[start : start + size]
                for index in self._english.get(said, []):
                    named.setdefault(index, said)
        return named


def alternatives_of(
    concepts: Sequence[Concept], own: tuple[str, ...]
) -> tuple[tuple[str, ...], ...]:
    """The phrases ``concepts`` add to a request whose own terms are ``own``: for a Chinese
    word, the entry's English words and its other Chinese spellings; for an English word,
    its Chinese words. A phrase of terms the request already holds adds nothing and is left
    out."""
    other = [phrase for concept in concepts for phrase in concept.other]
    spellings = [phrase for concept in concepts for phrase in concept.spellings]
    held = set(own)
    out = [p for p in dict.fromkeys(other + spellings) if not held.issuperset(p)]
    return tuple(out[:MAX_ALTERNATIVES])


def _phrases(words: list[str]) -> tuple[tuple[str, ...], ...]:
    analyzed = (tuple(tokens(word)) for word in words)
    return tuple(dict.fromkeys(phrase for phrase in analyzed if phrase))


@functools.cache
def lexicon() -> Lexicon:
    """The lexicon shipped with memvault, read once."""
    text = resources.files("memvault.search").joinpath("lexicon_zh_en.tsv").read_text("utf-8")
    return Lexicon(text.splitlines())
