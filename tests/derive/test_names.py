"""What a sentence names as code, and whether a text names a name (derive/names.py)."""

from __future__ import annotations

import pytest

from memvault.derive.names import (
    MAX_NAMES,
    REQUEST_NAMES,
    Names,
    chosen_names,
    code_names,
    file_names,
    of_project,
    plain_word,
    request_names,
    same_name,
    written_names,
)


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        (
            "Use 'Path.GetRandomFileName()' instead. but also address collision potential.",
            ["Path.GetRandomFileName", "GetRandomFileName"],
        ),
        (
            "can we please use the CommandLineParser library for cli handling?",
            ["CommandLineParser"],
        ),
        ("@dotnet.yml try to integrate it with my existing build", ["dotnet.yml"]),
        ("replace our bespoke diffing with the libgit2sharp library", ["libgit2sharp"]),
        ("set retry_after on the client and call os.path.join()", ["os.path.join", "retry_after"]),
        ("决定改用 fetchUser 替换 loadUser", ["fetchUser", "loadUser"]),
        # Chinese written right after a name ends it: no space is needed.
        ("为什么test_refresh_token_rotation失败", ["test_refresh_token_rotation"]),
        ("决定改用fetchUser替换loadUser", ["fetchUser", "loadUser"]),
        # An acronym that opens a name is code; a plural acronym is a word.
        ("wrap the HTTPServer and catch IOException for the URLs", ["HTTPServer", "IOException"]),
        # A path also by its file's name, when that is code-shaped (``file_names``); an
        # address only by what its path names: its host is no name of the thing.
        ("keep src/session/StoreHelper.ts small", ["src/session/StoreHelper.ts", "StoreHelper.ts"]),
        ("see lib/foo.bar/Baz_qux for it", ["lib/foo.bar/Baz_qux", "Baz_qux"]),
        ("error in src/app.py", ["src/app.py"]),
        ("please use @https://github.com/ktsu-dev/AppDataStorage for it", ["AppDataStorage"]),
        ("clone https://github.com/ktsu-dev/AppDataStorage.git first", ["AppDataStorage"]),
        ("base it on https://github.com/acme/pool_kit/tree/main", ["pool_kit"]),
        ("use https://pypi.org/project/httpx_retry/0.3.0/ now", ["httpx_retry"]),
        # A folder with a dot in its name is a folder, not a host (.NET projects).
        (
            "fix MyApp.Web/Controllers/HomeController.cs",
            ["MyApp.Web/Controllers/HomeController.cs", "HomeController.cs"],
        ),
        ("see BlastMerge.Core/Services/hasher.cs", ["BlastMerge.Core/Services/hasher.cs"]),
    ],
)
def test_a_decision_is_about_the_code_names_it_writes(sentence, names):
    assert list(code_names(sentence)) == names


@pytest.mark.parametrize(
    "sentence",
    [
        "Use Python and JSON for the cache, e.g. with a file per day.",
        "Bump the version to v1.2.3 and 2.0.1 next.",
        "决定改用httpx替换requests",  # a library written as a plain word is not told apart
        "The properties should be initialized to empty collections instead of null.",
        "Always call reset() before each test and save() after it.",  # plain words called
        "List the APIs, URLs and IDs in the README.",  # plural acronyms
        "OAuth at 40 MBps: the server ACKed it while SSHing in.",  # acronyms made words
        "read https://docs.python.org/3/library/asyncio.html first",  # an address of words
    ],
)
def test_plain_words_numbers_and_versions_are_not_code_names(sentence):
    assert code_names(sentence) == ()


def test_a_sentence_gives_each_name_once_and_at_most_a_few():
    sentence = " ".join(f"useName{n} and UseName{n}" for n in range(20))
    names = code_names(sentence)
    assert len(names) == MAX_NAMES
    assert len({n.casefold() for n in names}) == MAX_NAMES


def test_a_text_names_a_name_as_a_whole_word_whatever_separates_it():
    log = (
        r"/reference:C:\Users\runner\.nuget\packages\commandlineparser\2.9.1\lib\CommandLine.dll"
        "\n   at ktsu.Core.Services.SecureTempFileHelper.CreateTempDirectory() in Helper.cs"
    )
    names = Names(log)
    assert names.names("CommandLineParser")
    assert names.names("CommandLine.dll")
    assert names.names("CommandLine")  # a dotted word's beginning
    assert names.names("ktsu.Core")
    assert not names.names("LineParser")  # only a part of a word
    assert not names.names("Services.SecureTempFileHelper")
    assert not names.names("x")


def test_a_request_names_the_parts_of_its_paths_an_entity_is_named_by_whole():
    log = "/home/runner/.nuget/packages/commandlineparser/2.9.1/lib/CommandLine.dll"
    assert Names(log, parts=True).names("CommandLineParser")
    assert Names("see src/utils/retry_after.py", parts=True).names("retry_after")
    assert Names("at Blast.Core.ParallelHasher.Run()", parts=True).names("ParallelHasher")
    assert not Names("at Blast.Core.ParallelHasher.Run()").names("ParallelHasher")
    # An entity's file is named by its whole path, never by a part of another one.
    assert not Names(log).names("CommandLineParser")
    # A request's path names its file and every tail of it, not other stretches of it;
    # written with backslashes as well.
    path = Names("/code/app/src/login.py", parts=True)
    assert path.names("login.py") and path.names("src/login.py")
    assert path.names("app/src/login.py") and path.names("code/app/src/login.py")
    assert not path.names("app/src") and not path.names("code/app")
    windows = Names(r"C:\dev\Blast\Blast.Core\Services\TempFiles.cs(165): error", parts=True)
    assert windows.names("Blast.Core/Services/TempFiles.cs")
    assert not Names(r"C:\dev\Blast\Blast.Core\Services\TempFiles.cs").names(
        "Services/TempFiles.cs"
    )
    # A file name no word can hold (a ``+``, a space) is found as a path's tail as well.
    svelte = Names(r"src\routes\blog\+page.svelte:12 fails", parts=True)
    assert svelte.names("routes/blog/+page.svelte") and not svelte.names("blog/page.svelte")


def test_a_file_is_named_by_its_own_name_when_that_is_code_shaped_else_by_its_path():
    assert file_names("BlastMerge.Core/Services/SecureTempFileHelper.cs") == (
        "SecureTempFileHelper.cs",
    )
    assert file_names("app/crawlers/eastmoney_strategy.py") == ("eastmoney_strategy.py",)
    # Names in many folders: by the whole path the fact holds.
    assert file_names("src/session/store.ts") == ("src/session/store.ts",)
    assert file_names(r"web\src\index.ts") == ("web/src/index.ts",)
    assert file_names("web/src/index.test.ts") == ("web/src/index.test.ts",)
    assert file_names("vite.config.ts") == ()
    assert file_names("README.md") == ()


def test_a_name_is_the_same_whatever_separates_and_cases_its_words():
    assert same_name("BlastMerge", "blastmerge")
    assert same_name("twat_search", "twat-search")
    assert not same_name("BlastMergeCore", "blastmerge")


def test_the_projects_own_names_are_not_what_a_request_names():
    """A build log writes the project's assemblies whatever failed: those are no names to
    find a session by, and they take none of the few places a request's names have."""
    assert of_project("BlastMerge", "blastmerge")
    assert of_project("BlastMerge.Core", "blastmerge")
    assert of_project("ktsu.BlastMerge.Test.dll", "blastmerge")
    assert of_project("twat_search", "twat-search")
    assert of_project("BlastMerge.Core.csproj", "blastmerge")
    assert not of_project("BlastMerge.Core/Services/SecureTempFileHelper.cs", "blastmerge")
    assert not of_project("BlastMergeCore", "blastmerge")
    # Something in the project, though named after it: a module, a source file, a
    # namespace that ends in the project's name.
    assert not of_project("memvault.store.sqlite", "memvault")
    assert not of_project("app.py", "app")
    assert not of_project("src/App.tsx", "app")
    assert not of_project("Foo.Core", "core")
    assert written_names("error in src/app.py: KeyError", besides="app") == (
        "src/app.py",
        "KeyError",
    )
    log = (
        "BlastMerge.Core succeeded → ktsu.BlastMerge.Core.dll BlastMerge.ConsoleApp succeeded "
        "BlastMerge.Test failed: AppDataBatchManagerTests.cs(171) GetAllBatches_ReturnsAll "
        + " ".join(f"Helper{n}.Run" for n in range(MAX_NAMES))
    )
    assert written_names(log)[:2] == ("BlastMerge.Core", "ktsu.BlastMerge.Core.dll")
    found = written_names(log, besides="blastmerge")
    assert found[:3] == ("ConsoleApp", "AppDataBatchManagerTests.cs", "GetAllBatches_ReturnsAll")
    assert len(found) == MAX_NAMES


@pytest.mark.parametrize(
    ("request_text", "names"),
    [
        # A failing test's file names the test and the code under test.
        (
            "C:\\dev\\blast\\Blast.Test\\AppDataBatchManagerTests.cs(171): error test failed",
            ["AppDataBatchManagerTests", "AppDataBatchManager"],
        ),
        ("why does tests/test_store.py fail?", ["test_store", "store"]),
        ("src/session/store_test.go and web/Button.spec.tsx", ["store_test", "store", "Button"]),
        ("--- FAIL: TestStore_Get (0.00s)", ["TestStore_Get", "Store"]),
        # A plain file is named by its stem; a dotted name by its code-shaped parts.
        ("@notebooks/inference.ipynb what does it take?", ["inference"]),
        ("vite.config.ts sets the port", ["vite"]),
        ("Assert.AreEqual failed in Path.GetRandomFileName", ["AreEqual", "GetRandomFileName"]),
        # What a build makes is not code a session touched.
        ("3>C:\\Program Files\\dotnet\\dotnet.exe exec csc.dll /noconfig", []),
        # Words written in hex letters are names; a colour or an address holds a digit.
        ("feed.py and cafe.js", ["feed", "cafe"]),
        # Colours, hashes and versions name nothing.
        ("set the border to #E6A23C and C23A, pin 1.2.3", []),
    ],
)
def test_a_request_names_its_files_code_and_the_code_its_tests_test(request_text, names):
    assert list(request_names(request_text)) == names


def test_a_request_does_not_name_its_own_project_and_names_at_most_a_few():
    trace = (
        "at ktsu.BlastMerge.Test BlastMerge.ConsoleApp BlastMerge.Core/BlastMerge.cs "
        + " ".join(f"Method{n}_Works" for n in range(20))
    )
    names = request_names(trace, besides="blastmerge")
    assert not any(same_name(name, "BlastMerge") for name in names)
    assert len(names) == REQUEST_NAMES


# Pasted failures, each with frames of the language's or a library's own code around the
# project's: what the request names is the project's code alone.
TRACES = {
    "python": (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main\n'
        "    return _run_code(code, main_globals, None,\n"
        '  File "<frozen runpy>", line 88, in _run_code\n'
        '  File "/home/dev/app/.venv/lib/python3.11/site-packages/click/core.py", line 1078,'
        " in main\n"
        "    rv = self.invoke(click_context)\n"
        '  File "/home/dev/app/src/app/cli.py", line 42, in export_report\n'
        "    rows = load_rows(path)\n"
        "ValueError: empty_file",
        {"export_report", "load_rows"},
        {"_run_module_as_main", "_run_code", "main_globals", "click_context"},
    ),
    "java": (
        "java.lang.AssertionError: expected:<2> but was:<4>\n"
        "\tat org.junit.Assert.fail(Assert.java:89)\n"
        "\tat org.junit.Assert.assertEquals(Assert.java:647)\n"
        "\tat com.acme.billing.InvoiceServiceTest.totals(InvoiceServiceTest.java:42)\n"
        "\tat org.junit.runners.ParentRunner.run(ParentRunner.java:413)",
        {"InvoiceServiceTest", "InvoiceService"},
        {"Assert", "ParentRunner"},
    ),
    "rust": (
        "thread 'tests::parses_header' panicked at src/parser.rs:41:9:\n"
        "stack backtrace:\n"
        "   0: rust_begin_unwind\n"
        "             at /rustc/90b35a6239c3d8bd/library/std/src/panicking.rs:665:5\n"
        "   1: core::panicking::panic_fmt\n"
        "             at /rustc/90b35a6239c3d8bd/library/core/src/panicking.rs:74:14\n"
        "   2: mycrate::parser::tests::parses_header\n"
        "             at ./src/parser.rs:41:9\n"
        "   3: tokio::runtime::park::CachedParkThread::block_on\n"
        "             at /home/dev/.cargo/registry/src/tokio-1.40.0/src/runtime/park.rs:281:63",
        {"parses_header"},
        {"rust_begin_unwind", "panic_fmt", "CachedParkThread", "block_on", "panicking"},
    ),
    "go": (
        "--- FAIL: TestParseConfig (0.00s)\n"
        "panic: runtime error: index out of range [3] with length 3\n"
        "testing.tRunner.func1.2({0x5a1b20, 0xc000018030})\n"
        "\t/usr/local/go/src/testing/testing.go:1545 +0x238\n"
        "github.com/acme/tool/config.ParseConfig(...)\n"
        "\t/home/dev/tool/config/parse_config.go:33 +0x1d\n"
        "github.com/stretchr/testify/assert.Equal(...)\n"
        "\t/home/dev/go/pkg/mod/github.com/stretchr/testify@v1.8.4/assert/assertions.go:700",
        {"TestParseConfig", "ParseConfig", "parse_config"},
        {"tRunner", "assertions"},
    ),
    "node": (
        "TypeError: Cannot read properties of undefined (reading 'id')\n"
        "    at getUser (/home/dev/app/src/users/user_service.ts:12:20)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n"
        "    at processTicksAndRejections (node:internal/process/task_queues:95:5)",
        {"getUser", "user_service"},
        {"processTicksAndRejections", "task_queues"},
    ),
    ".net": (
        r"  Failed GetAllBatches_ReturnsAll [12 ms]"
        "\n  Stack Trace:\n"
        "     at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, "
        "Signature sig, Boolean isConstructor)\n"
        "     at Blast.Test.BatchManagerTests.GetAllBatches_ReturnsAll() in "
        r"C:\dev\Blast\Blast.Test\BatchManagerTests.cs:line 171",
        {"GetAllBatches_ReturnsAll", "BatchManagerTests", "BatchManager"},
        {"isConstructor", "InvokeMethod", "RuntimeMethodHandle"},
    ),
}


@pytest.mark.parametrize("language", TRACES)
def test_a_pasted_trace_names_the_projects_frames_not_the_runtimes(language):
    trace, named, unnamed = TRACES[language]
    found = set(request_names(trace)) | set(written_names(trace))
    assert named <= found, language
    assert not unnamed & found, language


def test_a_library_path_outside_a_frame_leaves_the_rest_of_its_line_named():
    said = "pip put it in .venv/lib/python3.11/site-packages/ but export_report still fails"
    assert "export_report" in request_names(said)


@pytest.mark.parametrize(
    ("said", "named"),
    [
        # A library's anonymous frame under the project's: the project's frame stays.
        (
            "TypeError: x is undefined\n"
            "    at UserService.loadProfile (/app/src/services/userService.js:42:17)\n"
            "    at /app/node_modules/express/lib/router/layer.js:95:5",
            {"UserService", "loadProfile"},
        ),
        # A sentence that opens with a Go package's name is no Go frame.
        (
            "reflect.DeepEqual fails in TestStore_Get for OrderBook (see store_test.go)",
            {"TestStore_Get", "OrderBook"},
        ),
        (
            "testing.T.Helper is not called in assertOrderBook (helpers_test.go)",
            {"assertOrderBook"},
        ),
        # Nor is a sentence that opens with "at", or a numbered list's line, a frame.
        ("at the moment /usr/lib/x is missing and ReportBuilder fails", {"ReportBuilder"}),
        ("1: std::fs::read fails for ConfigLoader", {"ConfigLoader"}),
    ],
)
def test_lines_that_only_look_like_a_library_frame_keep_their_names(said, named):
    assert named <= set(request_names(said))


def test_a_path_is_a_librarys_by_where_it_lies():
    assert not request_names('File "/usr/lib/python3.11/runpy.py", line 198')
    assert not request_names("/home/dev/app/.venv/lib/python3.11/site-packages/click/core.py")
    # A project in a container's /usr/src is the project's own.
    assert "billing_job" in request_names("/usr/src/app/server/billing_job.py fails")


@pytest.mark.parametrize(
    ("sentence", "chosen"),
    [
        # Decisions users stated in real sessions.
        ("use a mock filesystem for tests so we can run them in parallel.", ["mock filesystem"]),
        ("can we use mstest instead of custom tests?", ["mstest"]),
        ('USE "uv pip"!', ["uv pip"]),
        ("使用Vue 3 + Naive UI 的现代化前端，去掉静态界面。", ["Vue 3", "Naive UI"]),
        ("can we please use the CommandLineParser library for cli handling?",
         ["CommandLineParser"]),
        ("look for opportunities to use switch expressions instead of switch statements.",
         ["switch expressions"]),
        ("for the user-facing engine names use CONSTANTS defined in @__init__.py.", ["CONSTANTS"]),
        ("WE SHOULD STANDARDIZE ON UNDERSCORES for internal engine names", ["UNDERSCORES"]),
        # Other ways to choose.
        ("let's switch to pnpm for the workspace", ["pnpm"]),
        ("we decided to go with Redis and Postgres for caching", ["Redis", "Postgres"]),
        ("replace the bespoke diffing with the libgit2sharp library", ["libgit2sharp"]),
        ("改用httpx替换requests", ["httpx"]),
        ("use C++ for the core and Python for the scripts", ["C++"]),
        ("使用 Vue3 和 Pinia", ["Vue3", "Pinia"]),
        ("use a new caching layer", ["caching layer"]),
        # What a decision rules out is what it is about, too.
        ("Don't use mocks; use real DB", ["mocks", "real DB"]),
        ("Use 'Path.GetRandomFileName()' instead.", ["Path.GetRandomFileName()"]),
    ],
)  # fmt: skip
def test_a_decision_chooses_the_words_after_its_choice(sentence, chosen):
    assert list(chosen_names(sentence)) == chosen


@pytest.mark.parametrize(
    "sentence",
    [
        "use this workspace to make a dotnet application",
        "Use it for every request.",
        "use the following settings",
        "We decided nothing yet.",
        "The properties should be initialized to empty collections instead of null.",
        # Words that only qualify the thing chosen name nothing.
        "We should use a different approach",
        "use other tools for linting",
        "Use the latest version",
    ],
)
def test_a_decision_that_chooses_nothing_by_name_gives_nothing(sentence):
    assert chosen_names(sentence) == ()


def test_a_plain_word_is_one_word_that_is_not_written_as_code():
    assert plain_word("mstest") and plain_word("cache") and plain_word("UNDERSCORES")
    assert not plain_word("uv pip")  # a phrase
    assert not plain_word("CommandLineParser") and not plain_word("fnv1a")
    assert not plain_word("Path.GetRandomFileName()")
