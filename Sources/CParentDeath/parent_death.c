/* setenv(3) and pid_t are POSIX, not ISO C. */
#define _POSIX_C_SOURCE 200809L

#include "parent_death.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

/* Room for a pid in decimal and its terminating zero. */
enum { weft_parent_death_pid_digits_max = 24 };

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
#if defined(__linux__)
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return WeftParentDeathUnavailable;
    /* After the request: a parent that ends from now on sends the signal, and one that ended before has
       already handed this process to another (a subreaper or init), so getppid() no longer names it. */
    pid_t current = getppid();
    if (current != (pid_t)expected) {
        if (parent != NULL) *parent = (int)current;
        return WeftParentDeathNotParent;
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
