/* SPDX-License-Identifier: MIT */
/* The words find_papers searches the local papers index for. A question
 * ("what is known about the effect of warmup on training?") is mostly
 * function words: OR-ed into the search, they match nearly every paper
 * and add almost nothing to the ranking (BM25 gives a word in most papers
 * a weight near zero), so they are dropped. The list is the usual English
 * one (NLTK's, without contractions), lower case, sorted for bsearch. A
 * question of stopwords alone searches for them, rather than for nothing. */
#include "research/papers.h"

#include <stdlib.h>
#include <string.h>

static const char *const stopwords[] = {
  "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any",
  "are", "as", "at", "be", "because", "been", "before", "being", "below", "between",
  "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during",
  "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
  "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
  "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor",
  "not", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves",
  "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that",
  "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
  "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we",
  "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
  "with", "would", "you", "your", "yours", "yourself", "yourselves",
};

static int cmp_word(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pmcp__papers_stopword(const char *w)
{
  return bsearch(&w, stopwords, sizeof stopwords / sizeof stopwords[0], sizeof stopwords[0],
                 cmp_word) != NULL;
}

static int is_word_byte(unsigned char c)
{
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int pmcp__papers_words(const char *query, pmcp__papers_words_t *out)
{
  memset(out, 0, sizeof *out);
  size_t len = strlen(query);
  out->text = malloc(len + 1);
  if (!out->text)
    return PMCP_ENOMEM;
  /* each word of the query once, lower case, in order */
  char *all[PMCP__PW_MAX];
  size_t n_all = 0, at = 0;
  const unsigned char *p = (const unsigned char *)query;
  while (*p && n_all < PMCP__PW_MAX) {
    while (*p && !is_word_byte(*p))
      p++;
    const unsigned char *w = p;
    while (*p && is_word_byte(*p))
      p++;
    if (p == w)
      break;
    char *d = out->text + at;
    for (const unsigned char *c = w; c < p; c++)
      d[c - w] = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    d[p - w] = 0;
    int seen = 0;
    for (size_t i = 0; i < n_all && !seen; i++)
      seen = !strcmp(all[i], d);
    if (!seen) {
      all[n_all++] = d;
      at += (size_t)(p - w) + 1;
    }
  }
  for (size_t i = 0; i < n_all; i++)
    if (!pmcp__papers_stopword(all[i]) && out->n < PMCP__PAPERS_QWORDS)
      out->w[out->n++] = all[i];
  if (out->n == 0) {
    out->only_stopwords = n_all > 0;
    for (size_t i = 0; i < n_all && out->n < PMCP__PAPERS_QWORDS; i++)
      out->w[out->n++] = all[i];
  }
  return 0;
}

void pmcp__papers_words_free(pmcp__papers_words_t *w)
{
  free(w->text);
  memset(w, 0, sizeof *w);
}
