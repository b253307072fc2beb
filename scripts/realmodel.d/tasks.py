"""The old set of everyday tasks of scripts/realmodel (`--set old`): the ten
that ag was tuned on. Each is a tiny project (its files), the prompt a
person would type, a check that passes only when the task is done and
nothing else was broken, and a solution (a shell command) that
`scripts/realmodel --check-tasks` uses to prove the check can pass and
fail. The checks are shell commands run in the project after the agent
ends (python3 and grep only). The new set is in new_tasks.py."""

CALC = '''def add(a, b):
    return a + b


def subtract(a, b):
    return a + b


def multiply(a, b):
    return a * b
'''

TEST_CALC = '''import unittest

from calc import add, multiply, subtract


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_subtract(self):
        self.assertEqual(subtract(5, 3), 2)

    def test_multiply(self):
        self.assertEqual(multiply(4, 3), 12)


if __name__ == "__main__":
    unittest.main()
'''

# The test file must come out as it went in: the task is to fix the code.
TEST_CALC_SUM = "python3 -c \"import hashlib,sys; sys.exit(hashlib.sha256(open('test_calc.py','rb').read()).hexdigest() != '{}')\""

TASKS = [
    {
        "name": "create a file",
        "solution": 'printf \'print("Hello, world!")\\n\' > hello.py',
        "files": {"README.md": "# greeter\n\nA tiny program that greets the world.\n"},
        "prompt": "Create a Python script hello.py that prints exactly: Hello, world!",
        "check": "test \"$(python3 hello.py)\" = 'Hello, world!'",
    },
    {
        "name": "change a constant",
        "solution": "sed -i 's/TIMEOUT_SECONDS = 30/TIMEOUT_SECONDS = 60/' config.py",
        "files": {
            "config.py": "# Settings for the fetcher.\nBASE_URL = \"https://example.com/api\"\nTIMEOUT_SECONDS = 30\nRETRIES = 3\n",
            "fetch.py": "from config import BASE_URL, RETRIES, TIMEOUT_SECONDS\n\n\ndef describe():\n    return f\"{BASE_URL} timeout={TIMEOUT_SECONDS} retries={RETRIES}\"\n",
        },
        "prompt": "Change TIMEOUT_SECONDS to 60.",
        "check": "python3 -c 'import config as c, fetch; assert c.TIMEOUT_SECONDS == 60 and c.RETRIES == 3 and c.BASE_URL.endswith(\"/api\"); fetch.describe()' && test -z \"$(git ls-files --others --exclude-standard | grep -v __pycache__)\"",
    },
    {
        "name": "fix a typo",
        "solution": "sed -i 's/recieve/receive/' README.md",
        "files": {
            "README.md": "# mailer\n\nSends the reports every morning.\n\nYou will recieve one email per project.\nReplies go to the team's inbox.\n",
        },
        "prompt": "README.md misspells \"receive\". Fix the typo.",
        "check": "grep -q 'You will receive one email per project.' README.md && ! grep -q recieve README.md && test $(wc -l < README.md) -eq 6 && grep -q 'Replies go to' README.md",
    },
    {
        "name": "add a function",
        "solution": "printf '\\n\\ndef multiply(a, b):\\n    return a * b\\n' >> mathutils.py",
        "files": {
            "mathutils.py": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n    return a + b\n",
        },
        "prompt": "Add a function multiply(a, b) to mathutils.py that returns a times b.",
        "check": "python3 -c 'from mathutils import add, multiply; assert multiply(6, 7) == 42 and add(2, 3) == 5'",
    },
    {
        "name": "rename a function",
        "solution": "sed -i 's/say_hi/greet/g' greet.py",
        "files": {
            "greet.py": "def say_hi(name):\n    return \"Hi, \" + name + \"!\"\n\n\ndef main():\n    print(say_hi(\"Ann\"))\n    print(say_hi(\"Bob\"))\n\n\nif __name__ == \"__main__\":\n    main()\n",
        },
        "prompt": "In greet.py, rename the function say_hi to greet, and update its calls.",
        "check": "! grep -q say_hi greet.py && python3 -c 'from greet import greet; assert greet(\"X\") == \"Hi, X!\"' && test \"$(python3 greet.py)\" = \"$(printf 'Hi, Ann!\\nHi, Bob!')\"",
    },
    {
        "name": "fix a failing test",
        "solution": "sed -i '6s/a + b/a - b/' calc.py",
        "files": {"calc.py": CALC, "test_calc.py": TEST_CALC},
        "prompt": "The tests fail: run python3 -m unittest and fix calc.py so that they pass.",
        "check": "python3 -m unittest -q 2>/dev/null && " + TEST_CALC_SUM,
        "sha_of": "test_calc.py",
    },
    {
        "name": "remove a debug print",
        "solution": "sed -i '/DEBUG/d' app.py",
        "files": {
            "app.py": "def total(prices):\n    s = 0\n    for p in prices:\n        print(\"DEBUG\", p)\n        s += p\n    return s\n",
        },
        "prompt": "Remove the debug print from app.py.",
        "check": "! grep -q DEBUG app.py && python3 -c 'from app import total; assert total([1, 2, 3]) == 6'",
    },
    {
        "name": "set a json value",
        "solution": "sed -i 's/3000/8080/' settings.json",
        "files": {
            "settings.json": "{\n  \"name\": \"shop\",\n  \"port\": 3000,\n  \"debug\": true\n}\n",
        },
        "prompt": "In settings.json, set port to 8080.",
        "check": "python3 -c 'import json; s = json.load(open(\"settings.json\")); assert s == {\"name\": \"shop\", \"port\": 8080, \"debug\": True}, s'",
    },
    {
        "name": "ignore log files",
        "solution": "echo '*.log' >> .gitignore",
        "files": {".gitignore": "__pycache__/\n*.pyc\n", "main.py": "print('hi')\n"},
        "prompt": "Add *.log to .gitignore.",
        "check": "grep -qx '\\*.log' .gitignore && grep -qx '__pycache__/' .gitignore && grep -qx '\\*.pyc' .gitignore",
    },
    {
        "name": "count lines",
        "solution": 'wc -l < data.txt > count.txt',
        "files": {"data.txt": "".join(f"row {i}\n" for i in range(1, 18))},
        "prompt": "Count the lines of data.txt and write the number (just the number) into count.txt.",
        "check": "test \"$(tr -d ' \\n' < count.txt)\" = 17",
    },
]


def prepared(task):
    """The task with its check filled in (the test file's hash)."""
    import hashlib

    t = dict(task)
    if "sha_of" in t:
        digest = hashlib.sha256(t["files"][t["sha_of"]].encode()).hexdigest()
        t["check"] = t["check"].replace("{}", digest)
    return t
