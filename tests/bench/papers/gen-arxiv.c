/* SPDX-License-Identifier: MIT */
/* gen-arxiv N OUT.jsonl [QUERIES.tsv]: N arXiv-format metadata records
 * (the Kaggle / OAI snapshot schema `probe papers import` reads), made up
 * but shaped like the real thing, and question-shaped queries with the
 * papers that answer them.
 *
 * Words are synthetic ("kobamud"): consonant-vowel syllables without e, s,
 * l, c, y and a final b/d/k/p/v/z, so the Porter stemmer leaves them as
 * they are and a test can count them exactly. A paper draws its words from
 * a Zipf-distributed background vocabulary, English stopwords (about a
 * third of an abstract, as in real ones) and a few dozen generic science
 * words; papers of one topic (about 1 in 100) share three key words in
 * title and abstract, and 2% of papers mention another topic's key word
 * (noise). A query asks about a topic in a question ("What is known about
 * the K1 of K2 for K3?"), with a generic word or two; its relevant papers
 * are that topic's. Deterministic for a given N. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return rs;
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static const char cons[] = "bdgkmnprtvz";
static const char vow[] = "aiou";
static const char fin[] = "bdkpvz";

/* word i of the synthetic vocabulary (distinct for distinct i) */
static void word(uint64_t i, char *out)
{
  int f = (int)(i % 6);
  i /= 6;
  char *p = out;
  int syl = 2;
  uint64_t cap = 44 * 44;
  while (i >= cap) {
    i -= cap;
    cap *= 44;
    syl++;
  }
  for (int k = 0; k < syl; k++) {
    *p++ = cons[(i % 44) / 4];
    *p++ = vow[(i % 44) % 4];
    i /= 44;
  }
  *p++ = fin[f];
  *p = 0;
}

static const char *const stop[] = {
  "the", "of", "and", "a", "in", "to", "is", "we", "for", "that", "this", "with", "on",
  "by", "are", "as", "an", "be", "which", "from", "can", "our", "these", "it", "at", "or",
  "not", "has", "have", "such", "their", "been", "also", "than", "into", "both",
};
#define NSTOP (sizeof stop / sizeof stop[0])
static const char *const generic[] = {
  "model", "method", "results", "data", "learning", "network", "show", "propose",
  "approach", "performance", "problem", "analysis", "theory", "algorithm", "energy",
  "field", "quantum", "system", "training", "paper", "study", "new", "based", "using",
  "time", "effect", "large", "order", "state", "function", "general", "present",
};
#define NGEN (sizeof generic / sizeof generic[0])
static const char *const cats[] = {
  "cs.LG", "cs.CL", "cs.CV", "cs.AI", "stat.ML", "math.PR", "math.CO", "math.AP", "hep-th",
  "hep-ph", "quant-ph", "gr-qc", "astro-ph.GA", "astro-ph.CO", "cond-mat.str-el",
  "cond-mat.mes-hall", "physics.optics", "q-bio.NC", "econ.EM", "eess.SP",
};
#define NCAT (sizeof cats / sizeof cats[0])

#define NBG 60000      /* background words */
#define KEYBASE 200000 /* topic key words: KEYBASE + 3*topic + j */
static double *zcdf;

static uint64_t zipf(void)
{
  double u = unif();
  size_t lo = 0, hi = NBG - 1;
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (zcdf[m] < u)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

static int ntopics;

/* one background, stopword or generic token, or a key word of topic t
 * with probability pk */
static void token(char *out, int t, double pk)
{
  double u = unif();
  if (t >= 0 && u < pk)
    word(KEYBASE + 3 * (uint64_t)t + rnd() % 3, out);
  else if (u < pk + 0.33)
    strcpy(out, stop[rnd() % NSTOP]);
  else if (u < pk + 0.41)
    strcpy(out, generic[rnd() % NGEN]);
  else
    word(zipf(), out);
}

static int topic_of(long i) { return (int)((uint64_t)i * 2654435761u % (uint64_t)ntopics); }

int main(int argc, char **argv)
{
  if (argc < 3 || atol(argv[1]) < 100) {
    fprintf(stderr, "usage: gen-arxiv N(>=100) OUT.jsonl [QUERIES.tsv]\n");
    return 2;
  }
  long n = atol(argv[1]);
  FILE *f = fopen(argv[2], "w");
  if (!f) {
    perror(argv[2]);
    return 1;
  }
  zcdf = malloc(NBG * sizeof *zcdf);
  double z = 0;
  for (size_t i = 0; i < NBG; i++)
    zcdf[i] = (z += 1.0 / pow((double)i + 3.0, 1.0));
  for (size_t i = 0; i < NBG; i++)
    zcdf[i] /= z;
  ntopics = (int)(n / 100 > 20 ? n / 100 : 20);
  char w[64];
  for (long i = 0; i < n; i++) {
    int t = topic_of(i);
    long mon = i / 5000;
    int yy = 7 + (int)(mon / 12), mm = 1 + (int)(mon % 12);
    fprintf(f, "{\"id\":\"%02d%02d.%05ld\",\"submitter\":\"Gen\",\"authors\":\"", yy % 100, mm,
            i % 5000 + 1);
    char names[3][2][64];
    int na = 1 + (int)(rnd() % 3);
    for (int a = 0; a < na; a++) {
      for (int k = 0; k < 2; k++) {
        word(400000 + rnd() % 5000, names[a][k]);
        names[a][k][0] = (char)(names[a][k][0] - 32);
      }
      fprintf(f, "%s%s %s", a ? ", " : "", names[a][0], names[a][1]);
    }
    fputs("\",\"title\":\"", f);
    int tl = 5 + (int)(rnd() % 6);
    for (int k = 0; k < tl; k++) {
      token(w, t, k < 2 ? 0.5 : 0.1);
      fprintf(f, "%s%s", k ? " " : "", w);
    }
    int c1 = t % (int)NCAT, c2 = (int)(rnd() % NCAT);
    fprintf(f, "\",\"comments\":null,\"journal-ref\":null,\"doi\":null,"
               "\"report-no\":null,\"categories\":\"%s%s%s\",\"license\":null,"
               "\"abstract\":\"  ", cats[c1], c2 != c1 ? " " : "", c2 != c1 ? cats[c2] : "");
    int al = 60 + (int)(rnd() % 120);
    int noise = unif() < 0.02 ? topic_of((long)(rnd() % (uint64_t)n)) : -1;
    for (int k = 0; k < al; k++) {
      if (noise >= 0 && k == al / 2)
        word(KEYBASE + 3 * (uint64_t)noise + rnd() % 3, w);
      else
        token(w, t, 0.03);
      fprintf(f, "%s%s%s", k ? " " : "", w, k % 17 == 16 ? "." : "");
    }
    fprintf(f, ".\\n\",\"versions\":[{\"version\":\"v1\",\"created\":\"Mon, %d Jan 20%02d "
               "10:00:00 GMT\"}],\"update_date\":\"20%02d-%02d-01\",\"authors_parsed\":[",
            1 + (int)(i % 28), yy % 100, yy % 100, mm);
    for (int a = 0; a < na; a++)
      fprintf(f, "%s[\"%s\",\"%s\",\"\"]", a ? "," : "", names[a][1], names[a][0]);
    fputs("]}\n", f);
  }
  if (fclose(f)) {
    perror(argv[2]);
    return 1;
  }
  if (argc > 3) {
    FILE *q = fopen(argv[3], "w");
    if (!q) {
      perror(argv[3]);
      return 1;
    }
    for (int k = 0; k < 200; k++) {
      int t = (int)(rnd() % (uint64_t)ntopics);
      char a[3][64];
      for (int j = 0; j < 3; j++)
        word(KEYBASE + 3 * (uint64_t)t + (uint64_t)j, a[j]);
      const char *g = generic[rnd() % NGEN];
      char qs[400];
      switch (k % 5) {
      case 0: snprintf(qs, sizeof qs, "What is known about the %s of %s for %s?", a[0], a[1], a[2]); break;
      case 1: snprintf(qs, sizeof qs, "How does %s affect %s in %s %s?", a[0], a[1], g, a[2]); break;
      case 2: snprintf(qs, sizeof qs, "Which %s improve %s and %s?", g, a[0], a[2]); break;
      case 3: snprintf(qs, sizeof qs, "Is there a %s that explains %s with %s?", g, a[1], a[2]); break;
      default: snprintf(qs, sizeof qs, "Why do %s and %s fail on the %s %s?", a[0], a[1], g, a[2]); break;
      }
      fprintf(q, "%s\t", qs);
      int first = 1;
      for (long i = 0; i < n; i++)
        if (topic_of(i) == t) {
          long mon = i / 5000;
          fprintf(q, "%s%02d%02d.%05ld", first ? "" : " ", (int)((7 + mon / 12) % 100),
                  1 + (int)(mon % 12), i % 5000 + 1);
          first = 0;
        }
      fputc('\n', q);
    }
    fclose(q);
  }
  free(zcdf);
  return 0;
}
