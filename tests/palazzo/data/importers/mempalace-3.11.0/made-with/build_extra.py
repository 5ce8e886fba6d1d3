import os, sys
os.environ.setdefault("MEMPALACE_PALACE_PATH", "/tmp/mpwork/palace")
import mempalace.mcp_server as M
tools_diary = tools_kg = tools_write = M
_guards = M
print(M._config.palace_path)
print(tools_write.tool_add_drawer("wing_people", "family", "Alice's son Max started swimming lessons.", source_file="chat-2025-01.txt"))
print(tools_diary.tool_diary_write("Reviewer", "Looked at the auth PR; the refresh-token path lacks a test.", topic="code-review"))
print(tools_diary.tool_diary_write("Reviewer", "x" * 2500, topic="long"))
print(tools_kg.tool_kg_add("Max", "child_of", "Alice", valid_from="2015-04-01"))
print(tools_kg.tool_kg_add("Max", "does", "swimming", valid_from="2025-01-01", valid_to="2025-06-30"))
print(tools_kg.tool_kg_add("Alice", "works at", "Acme Corp", valid_from="2020-01-01T09:00:00Z"))
print(tools_kg.tool_kg_add("Alice", "likes", "tea"))
