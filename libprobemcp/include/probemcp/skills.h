/* SPDX-License-Identifier: MIT */
/**
 * @file skills.h
 * The skills registry: Agent Skills served over MCP (the extension
 * io.modelcontextprotocol/skills). A skill is a directory of text files,
 * one of them SKILL.md with YAML frontmatter (name, description). The
 * engine serves each file as an ordinary resource at
 * skill://<skill path>/<file path>, answers skills/list and skills/get with
 * the skill's frontmatter and a manifest of its files (SHA-256 digest and
 * size of the very bytes resources/read returns), and declares the
 * extension in capabilities.extensions (server/discover and initialize)
 * once a skill is registered. Register before the first message, like
 * tools. @since 0.2
 */
#ifndef PROBEMCP_SKILLS_H
#define PROBEMCP_SKILLS_H

#include "common.h"
#include "server.h"

PMCP_BEGIN_DECLS

/** One file of a skill. The bytes are copied. */
typedef struct pmcp_skill_file {
  /** Path inside the skill, '/'-separated, e.g. "SKILL.md" or
   *  "reference/refs.md": segments of letters, digits and "-._~", never
   *  "." or "..". */
  const char *path;
  /** MIME type, or NULL: text/markdown for *.md, application/json for
   *  *.json, text/plain otherwise. */
  const char *mime_type;
  /** The content: UTF-8 text without NUL bytes (binary files are refused). */
  const void *data;
  size_t size;
} pmcp_skill_file;

#define PMCP_SKILL_DEF_VERSION 1
/** A skill to register. */
typedef struct pmcp_skill_def {
  unsigned version;     /**< PMCP_SKILL_DEF_VERSION */
  /** The skill path: one or more '/'-separated segments; the last is the
   *  skill's name and must equal the frontmatter "name" (lower-case
   *  letters, digits and single hyphens, at most 64 characters). */
  const char *path;
  /** The files; one of them is "SKILL.md". */
  const pmcp_skill_file *files;
  size_t n_files;
} pmcp_skill_def;
#define PMCP_SKILL_DEF_INIT {PMCP_SKILL_DEF_VERSION, NULL, NULL, 0}

/**
 * Registers a skill and its files (as resources).
 * @return 0; PMCP_EINVAL (a bad path, no SKILL.md, frontmatter without
 *         name or description or a name that differs from the path, a file
 *         that is not UTF-8 text, more than 512 files or 16 MiB: the limits
 *         every host must accept); PMCP_EEXIST (the skill or one of its
 *         URIs is registered already); PMCP_EMISUSE (after the first
 *         message); PMCP_ENOMEM. pmcp_server_errmsg() names the problem.
 */
PMCP_API int pmcp_server_add_skill(pmcp_server *server, const pmcp_skill_def *def);

/**
 * Adds files to the registered skill at @p skill_path (a toolset extending
 * another's skill); the manifest and digests follow.
 * @return 0; PMCP_ENOTFOUND (no such skill); PMCP_EINVAL, PMCP_EEXIST,
 *         PMCP_EMISUSE, PMCP_ENOMEM as for pmcp_server_add_skill() (a
 *         second SKILL.md is refused).
 */
PMCP_API int pmcp_server_add_skill_files(pmcp_server *server, const char *skill_path,
                                         const pmcp_skill_file *files, size_t n_files);

PMCP_END_DECLS

#endif
