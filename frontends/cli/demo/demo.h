/* SPDX-License-Identifier: MIT */
/* The demo's bundled data files (generated demo_data.c) and the lab the
 * demo generates around them (cmd_demo.c, demo_lab.c). */
#ifndef PROBE_DEMO_H
#define PROBE_DEMO_H

#include <stddef.h>

#include "probemcp/probemcp.h"

typedef struct probe_demo_file {
  const char *name;            /* path under demo/data/ */
  const unsigned char *zdata;  /* zstd frame */
  size_t zsize;
  size_t size;                 /* uncompressed */
} probe_demo_file;

extern const probe_demo_file probe_demo_files[];
extern const size_t probe_demo_n_files;

/* Writes the generated part of the demo lab (projects, runs with metrics,
 * notes, artifacts, catalog, sessions, ...) in one transaction. Prints
 * nothing; on failure returns the store's code (message on the store). */
int probe_demo_lab(pmcp_store *s, pmcp_tenant t);

#endif
