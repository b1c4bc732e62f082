// Linux interfaces that Glibc's Swift module map does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <pthread.h>

// These are GNU extensions, declared by the C headers only under _GNU_SOURCE, which the
// Swift Glibc module is not built with. SystemThread names its threads with the second.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int pthread_setname_np(pthread_t thread, const char *name);

// posix_spawn extensions (glibc 2.29 and 2.34) for starting child processes in tests: a child
// closes every inherited descriptor above stderr without the parent listing them, which would
// race with threads that open and close sockets meanwhile.
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
extern int pipe2(int fds[2], int flags);
