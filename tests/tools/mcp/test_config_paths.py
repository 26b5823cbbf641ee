"""Where MCP servers come from: mcp.json, a trusted project's .mcp.json, --mcp-config."""

from __future__ import annotations

import json
import os

from dsh_cli.tools.mcp.config import config_paths


def write(path, data=None):
    path.write_text(json.dumps(data or {"mcpServers": {}}))
    return path


def test_user_file_then_trusted_project_then_flags_in_override_order(tmp_path):
    config, project = tmp_path / "config", tmp_path / "project"
    config.mkdir(), project.mkdir()
    user = write(config / "mcp.json")
    local = write(project / ".mcp.json")
    flag = write(tmp_path / "extra.json")
    notices = []
    paths = config_paths([str(flag)], project=True, cwd=project, config_dir=config,
                         notice=notices.append)
    assert paths == [user, local, flag] and notices == []
    trust = config / "trusted-projects.json"
    assert os.stat(trust).st_mode & 0o777 == 0o600
    assert str(project.resolve()) in json.loads(trust.read_text())["projects"]


def test_an_untrusted_or_changed_project_file_is_left_out_with_one_notice(tmp_path):
    config, project = tmp_path / "config", tmp_path / "project"
    config.mkdir(), project.mkdir()
    write(project / ".mcp.json")
    notices = []
    assert config_paths([], project=False, cwd=project, config_dir=config,
                        notice=notices.append) == []
    assert len(notices) == 1 and "--mcp-project" in notices[0]
    config_paths([], project=True, cwd=project, config_dir=config)
    assert config_paths([], project=False, cwd=project, config_dir=config) == [
        project / ".mcp.json"]
    write(project / ".mcp.json", {"mcpServers": {"x": {"command": "evil"}}})
    notices.clear()
    assert config_paths([], project=False, cwd=project, config_dir=config,
                        notice=notices.append) == []
    assert len(notices) == 1


def test_nothing_configured_is_no_paths_and_a_corrupt_trust_store_trusts_nothing(tmp_path):
    assert config_paths([], project=False, cwd=tmp_path, config_dir=tmp_path) == []
    (tmp_path / "trusted-projects.json").write_text("not json")
    write(tmp_path / ".mcp.json")
    assert config_paths([], project=False, cwd=tmp_path, config_dir=tmp_path) == []
