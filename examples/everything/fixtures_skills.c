/* SPDX-License-Identifier: MIT */
/*
 * The Skills extension's fixture (io.modelcontextprotocol/skills): one
 * skill with a supporting file, for the suite's skills scenarios
 * (enumeration, manifest, skills/get). The engine serves the files as
 * skill:// resources and answers skills/list and skills/get.
 */
#include "fixtures.h"

static const char skill_md[] =
    "---\n"
    "name: git-workflow\n"
    "description: Follow this team's Git conventions for branching and commits\n"
    "license: Apache-2.0\n"
    "metadata:\n"
    "  version: \"1.0\"\n"
    "---\n"
    "# Git workflow\n"
    "\n"
    "Branch from main, one topic per branch; write commit messages that say\n"
    "what changed and why. The naming rules are in `reference/conventions.md`.\n";

static const char conventions_md[] =
    "# Conventions\n"
    "\n"
    "- Branches: `topic/<short-name>`.\n"
    "- Commits: a summary line under 72 characters, then the why.\n";

int everything_register_skills(pmcp_server *server) {
  const pmcp_skill_file files[] = {
      {"SKILL.md", NULL, skill_md, sizeof skill_md - 1},
      {"reference/conventions.md", NULL, conventions_md, sizeof conventions_md - 1},
  };
  pmcp_skill_def d = PMCP_SKILL_DEF_INIT;
  d.path = "git-workflow";
  d.files = files;
  d.n_files = sizeof files / sizeof files[0];
  return pmcp_server_add_skill(server, &d);
}
