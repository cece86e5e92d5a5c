/* SPDX-License-Identifier: MIT */
/* A preloaded library that makes the disk look full: once the files under
 * PMCP_TEST_ENOSPC_DIR have been written PMCP_TEST_ENOSPC_AFTER bytes,
 * every further write to them fails with ENOSPC, the way a full file
 * system answers. Used by check-disk-full.py only. */
/* both pwrite and pwrite64 are replaced: keep them distinct symbols */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static _Atomic long long written;

/* 1 when @p fd is a file under the watched folder. */
static int watched(int fd)
{
  const char *dir = getenv("PMCP_TEST_ENOSPC_DIR");
  if (!dir || !*dir || fd < 0)
    return 0;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0)
    return 0;
  path[n] = '\0';
  size_t dl = strlen(dir);
  return !strncmp(path, dir, dl) && path[dl] == '/';
}

/* 0 when @p len more bytes fit, else -1 with errno ENOSPC. */
static int room(int fd, size_t len)
{
  if (!watched(fd))
    return 0;
  const char *after = getenv("PMCP_TEST_ENOSPC_AFTER");
  long long cap = after ? atoll(after) : 0;
  if (atomic_fetch_add(&written, (long long)len) + (long long)len > cap) {
    errno = ENOSPC;
    return -1;
  }
  return 0;
}

/* The next definition of a function; memcpy because ISO C has no cast
 * from an object pointer to a function pointer. */
#define DEFINE_NEXT(name, ret, ...)                                       \
  typedef ret (*name##_fn)(__VA_ARGS__);                                  \
  static name##_fn next_##name(void)                                      \
  {                                                                       \
    name##_fn fn;                                                         \
    void *p = dlsym(RTLD_NEXT, #name);                                    \
    memcpy(&fn, &p, sizeof fn);                                           \
    return fn;                                                            \
  }

DEFINE_NEXT(write, ssize_t, int, const void *, size_t)
DEFINE_NEXT(pwrite, ssize_t, int, const void *, size_t, off_t)
DEFINE_NEXT(pwrite64, ssize_t, int, const void *, size_t, off64_t)
DEFINE_NEXT(writev, ssize_t, int, const struct iovec *, int)

ssize_t write(int fd, const void *buf, size_t len)
{
  if (room(fd, len))
    return -1;
  return next_write()(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
  if (room(fd, len))
    return -1;
  return next_pwrite()(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
  if (room(fd, len))
    return -1;
  return next_pwrite64()(fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
  size_t len = 0;
  for (int i = 0; i < n; i++)
    len += iov[i].iov_len;
  if (room(fd, len))
    return -1;
  return next_writev()(fd, iov, n);
}
