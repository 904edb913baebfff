// Preloaded (LD_PRELOAD) into a process under test to show that it never calls fork() or
// vfork(): when it loads it creates $IL_FORK_TRAP_DIR/loaded, and a call to either creates
// $IL_FORK_TRAP_DIR/forked-PID and fails with ENOSYS instead of forking. glibc's posix_spawn
// calls neither (it clones), so the processes a program starts that way pass untouched.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

namespace {

void touch(const char* name) {
  const char* dir = ::getenv("IL_FORK_TRAP_DIR");
  if (dir == nullptr) return;
  char path[4096];
  ::snprintf(path, sizeof path, "%s/%s", dir, name);
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
}

__attribute__((constructor)) void loaded() { touch("loaded"); }

pid_t caught() {
  char name[64];
  ::snprintf(name, sizeof name, "forked-%ld", static_cast<long>(::getpid()));
  touch(name);
  errno = ENOSYS;
  return -1;
}

}  // namespace

extern "C" pid_t fork() { return caught(); }
extern "C" pid_t vfork() { return caught(); }
