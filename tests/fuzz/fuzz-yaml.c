/* SPDX-License-Identifier: MIT */
/* The importers' YAML reader on libyaml (MLflow meta.yaml, Lightning hparams.yaml). */
#include <string.h>

#include "util/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cb(void *ud, const char *path, const pmcp__imp_value *v, int line)
{
  size_t *n = ud;
  *n += strlen(path);
  if (v->type == PMCP__IV_STR || v->type == PMCP__IV_JSON)
    *n += strlen(v->s);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  size_t n = 0;
  int line = 0;
  const char *why = NULL;
  pmcp__yaml_parse((const char *)data, size, cb, &n, &line, &why);
  return 0;
}
