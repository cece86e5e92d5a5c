/* SPDX-License-Identifier: MIT */
/* Benchmarks' helper (tests/bench only, no library needed): the buffered
 * reads of the benches that talk to a server over a pipe or a socket.
 * Include once per program. */
#ifndef PMCP_BENCH_IO_H
#define PMCP_BENCH_IO_H

#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* Appends what @p fd has (one read) to @p buf, of @p cap bytes, holding
 * *@p len. @return 0; -1 when the buffer is full; -2 when @p fd ended or
 * failed. */
static inline int bench_read_more(int fd, char *buf, size_t cap, size_t *len)
{
  if (*len == cap)
    return -1;
  ssize_t r = read(fd, buf + *len, cap - *len);
  if (r <= 0)
    return -2;
  *len += (size_t)r;
  return 0;
}

#endif
