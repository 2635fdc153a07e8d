/* setenv(3), pid_t and pthreads are POSIX, not ISO C; syscall(2) is a GNU extension. */
#define _GNU_SOURCE

#include "parent_death.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* Room for a pid in decimal and its terminating zero. */
enum { weft_parent_death_pid_digits_max = 24 };

#if defined(__linux__) && defined(SYS_pidfd_open)
/* Waits, on a thread of its own, until the parent process ends (its pidfd becomes readable), then kills
   this process. A pidfd follows the parent *process*, whichever of its threads started this one. */
static void *weft_parent_death_watch(void *argument) {
    int descriptor = (int)(long)argument;
    struct pollfd watched = {.fd = descriptor, .events = POLLIN, .revents = 0};
    while (poll(&watched, 1, -1) < 0 && errno == EINTR) {
    }
    kill(getpid(), SIGKILL);
    return NULL;
}
#endif

WeftParentDeath weft_parent_death_arm(int *parent) {
    const char *text = getenv(WEFT_PARENT_DEATH_VARIABLE);
    if (text == NULL || text[0] == '\0') return WeftParentDeathNotAsked;
    /* Digits only: strtol alone would take a sign, leading blanks or a trailing word. */
    for (const char *digit = text; *digit != '\0'; digit++) {
        if (*digit < '0' || *digit > '9') return WeftParentDeathInvalidValue;
    }
    errno = 0;
    long expected = strtol(text, NULL, 10);
    if (errno != 0 || expected < 1 || expected > INT_MAX) return WeftParentDeathInvalidValue;
#if defined(__linux__) && defined(SYS_pidfd_open)
    int descriptor = (int)syscall(SYS_pidfd_open, (pid_t)expected, 0);
    if (descriptor < 0 && errno != ESRCH) return WeftParentDeathUnavailable;
    /* After the pidfd is open, a parent that ends from now on makes it readable; one that ended before
       has already handed this process to another (a subreaper or init), so getppid() no longer names it. */
    pid_t current = getppid();
    if (descriptor < 0 || current != (pid_t)expected) {
        if (descriptor >= 0) close(descriptor);
        if (parent != NULL) *parent = (int)current;
        return WeftParentDeathNotParent;
    }
    pthread_t watcher;
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return WeftParentDeathUnavailable;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    int failure = pthread_create(&watcher, &attributes, weft_parent_death_watch, (void *)(long)descriptor);
    pthread_attr_destroy(&attributes);
    if (failure != 0) {
        close(descriptor);
        errno = failure;
        return WeftParentDeathUnavailable;
    }
    char own[weft_parent_death_pid_digits_max];
    snprintf(own, sizeof own, "%d", (int)getpid());
    if (setenv(WEFT_PARENT_DEATH_VARIABLE, own, 1) != 0) return WeftParentDeathUnavailable;
    return WeftParentDeathArmed;
#else
    (void)parent;
    errno = ENOSYS;
    return WeftParentDeathUnavailable;
#endif
}

const char *weft_parent_death_arm_or_explain(void) {
    static char sentence[256];
    int parent = 0;
    const char *named = getenv(WEFT_PARENT_DEATH_VARIABLE);
    /* Read before arming, which replaces the value with this process's pid. */
    char given[weft_parent_death_pid_digits_max] = "";
    if (named != NULL) snprintf(given, sizeof given, "%s", named);
    switch (weft_parent_death_arm(&parent)) {
    case WeftParentDeathNotAsked:
    case WeftParentDeathArmed:
        return NULL;
    case WeftParentDeathInvalidValue:
        snprintf(sentence, sizeof sentence, "invalid %s: it names the pid of this command's parent, a number from 1",
                 WEFT_PARENT_DEATH_VARIABLE);
        break;
    case WeftParentDeathNotParent:
        snprintf(sentence, sizeof sentence,
                 "%s=%s is not the parent (pid %d): it ended, or the variable was inherited",
                 WEFT_PARENT_DEATH_VARIABLE, given, parent);
        break;
    case WeftParentDeathUnavailable:
        snprintf(sentence, sizeof sentence, "%s cannot be honoured here: %s", WEFT_PARENT_DEATH_VARIABLE,
                 strerror(errno));
        break;
    }
    return sentence;
}
