/* SPDX-License-Identifier: MIT */
/* One PNG image beside a page's text (budget.h): its reference cost of
 * width * height / 750 tokens is counted with the text against
 * token_budget, and the engine's final check (budget.c) prices the image
 * from the PNG's own header, so a tool cannot understate it. */
#include "core/page_int.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/base64url.h"
#include "util/buf.h"

/* Pixels per token of the reference cost. */
#define PIXELS_PER_TOKEN 750

int pmcp_page_image_cost(int width, int height)
{
  if (width <= 0 || height <= 0)
    return 0;
  long long px = (long long)width * height;
  return (int)((px + PIXELS_PER_TOKEN - 1) / PIXELS_PER_TOKEN);
}

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int pmcp__png_size(const unsigned char *p, size_t len, int *w, int *h)
{
  /* signature, then the IHDR chunk: length 13, "IHDR", width, height */
  if (len < 24 || memcmp(p, png_sig, 8) != 0 || be32(p + 8) != 13 ||
      memcmp(p + 12, "IHDR", 4) != 0)
    return PMCP_EINVAL;
  uint32_t a = be32(p + 16), b = be32(p + 20);
  if (a == 0 || b == 0 || a > 100000 || b > 100000)
    return PMCP_EINVAL;
  *w = (int)a;
  *h = (int)b;
  return 0;
}

/* Standard base64 (as MCP image data is) from the base64url codec: the
 * alphabets differ in two characters, and the standard one pads. */
static void to_std(char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    s[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
}

int pmcp__image_item_cost(const char *json, size_t len, size_t *tokens)
{
  cJSON *v = cJSON_ParseWithLength(json, len);
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(v, "type");
  const cJSON *mime = cJSON_GetObjectItemCaseSensitive(v, "mimeType");
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(v, "data");
  int rc = PMCP_EINVAL;
  if (cJSON_IsString(type) && !strcmp(type->valuestring, "image") && cJSON_IsString(mime) &&
      !strcmp(mime->valuestring, "image/png") && cJSON_IsString(data) &&
      strlen(data->valuestring) >= 32) {
    /* the first 32 base64 characters are the PNG's first 24 bytes */
    char url[32];
    unsigned char head[25];
    size_t got = 0;
    memcpy(url, data->valuestring, sizeof url);
    for (size_t i = 0; i < sizeof url; i++)
      url[i] = url[i] == '+' ? '-' : url[i] == '/' ? '_' : url[i];
    int ok = pmcp__b64url_decode(url, sizeof url, head, &got) == PMCP__B64_OK && got == 24;
    int w = 0, h = 0;
    if (ok && pmcp__png_size(head, 24, &w, &h) == 0) {
      *tokens = (size_t)pmcp_page_image_cost(w, h);
      rc = 0;
    }
  }
  cJSON_Delete(v);
  return rc;
}

static int usable(const pmcp_page *pg)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || pg->done)
    return PMCP_EMISUSE;
  if (pg->status)
    return pg->status;
  return pg->failed ? PMCP_EMISUSE : 0;
}

int pmcp_page_image_reserve(pmcp_page *pg, int tokens)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || tokens < 0)
    return PMCP_EINVAL;
  if (pg->image.len)
    return PMCP_EMISUSE;
  size_t user = pg->reserve > pg->img_tokens ? pg->reserve - pg->img_tokens : 0;
  pg->img_tokens = (size_t)tokens;
  pg->reserve = user + pg->img_tokens;
  return 0;
}

int pmcp_page_image_room(pmcp_page *pg, int more, int *room)
{
  int rc = usable(pg);
  if (rc || !room)
    return rc ? rc : PMCP_EINVAL;
  size_t tokens = 0;
  rc = pmcp__page_text_tokens(pg, more, &tokens);
  if (rc)
    return rc;
  size_t user = pg->reserve > pg->img_tokens ? pg->reserve - pg->img_tokens : 0;
  size_t used = tokens + user;
  *room = used >= (size_t)pg->budget ? 0 : (int)((size_t)pg->budget - used);
  return 0;
}

int pmcp_page_image(pmcp_page *pg, int more, const void *png, size_t len, int width,
                    int height)
{
  int rc = usable(pg);
  if (rc)
    return rc;
  if (pg->image.len)
    return PMCP_EMISUSE;
  int w = 0, h = 0;
  if (!png || pmcp__png_size(png, len, &w, &h) || w != width || h != height)
    return PMCP_EINVAL;
  int room = 0;
  rc = pmcp_page_image_room(pg, more, &room);
  if (rc)
    return rc;
  int cost = pmcp_page_image_cost(width, height);
  if (cost > room)
    return PMCP_EBUDGET;
  if (pmcp__buf_append(&pg->image, png, len))
    return PMCP_ENOMEM;
  size_t user = pg->reserve > pg->img_tokens ? pg->reserve - pg->img_tokens : 0;
  pg->img_w = width;
  pg->img_h = height;
  pg->img_tokens = (size_t)cost;
  pg->reserve = user + pg->img_tokens;
  return 0;
}

int pmcp_page_send_image(pmcp_page *pg, pmcp_call *call)
{
  if (!pg || pg->magic != PMCP__PAGE_MAGIC || !pg->done || !call)
    return PMCP_EMISUSE;
  if (!pg->image.len || pg->status || pg->failed)
    return 0;
  pmcp_buf b = PMCP_BUF_INIT;
  if (pmcp__b64url_encode(&b, pg->image.ptr, pg->image.len))
    return PMCP_ENOMEM;
  to_std(b.ptr, b.len);
  int rc = 0;
  while (b.len % 4 && !rc)
    rc = pmcp__buf_putc(&b, '=');
  char *s = b.ptr;
  if (rc) {
    pmcp_buf_dispose(&b);
    return rc;
  }
  rc = pmcp_result_image(call, s, "image/png");
  pmcp_buf_dispose(&b);
  return rc;
}
