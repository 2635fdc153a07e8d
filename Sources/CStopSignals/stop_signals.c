#include "stop_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* The write end of the pipe, -1 until it exists. Lock-free atomics are safe in a signal handler. */
static atomic_int weft_stop_signals_write_end = -1;

static void weft_stop_signals_handle(int signal) {
    int saved = errno;
    int end = atomic_load(&weft_stop_signals_write_end);
    if (end >= 0) {
        unsigned char number = (unsigned char)signal;
        /* Non-blocking: a full pipe drops the byte rather than stall whichever thread took the signal. */
        ssize_t written = write(end, &number, 1);
        (void)written;
    }
    errno = saved;
}

static int weft_stop_signals_set_flags(int descriptor, int descriptorFlags, int statusFlags) {
    int current = fcntl(descriptor, F_GETFD);
    if (current < 0 || fcntl(descriptor, F_SETFD, current | descriptorFlags) != 0) return -1;
    current = fcntl(descriptor, F_GETFL);
    if (current < 0 || fcntl(descriptor, F_SETFL, current | statusFlags) != 0) return -1;
    return 0;
}

int weft_stop_signals_route(void) {
    int ends[2];
    if (pipe(ends) != 0) return -1;
    if (weft_stop_signals_set_flags(ends[0], FD_CLOEXEC, 0) != 0
        || weft_stop_signals_set_flags(ends[1], FD_CLOEXEC, O_NONBLOCK) != 0) {
        int saved = errno;
        close(ends[0]);
        close(ends[1]);
        errno = saved;
        return -1;
    }
    atomic_store(&weft_stop_signals_write_end, ends[1]);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = weft_stop_signals_handle;
    sigemptyset(&action.sa_mask);
    /* Restart the system calls the signal interrupts: SQLite and libuv threads carry on undisturbed. */
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &action, NULL) != 0 || sigaction(SIGTERM, &action, NULL) != 0
        || sigaction(SIGHUP, &action, NULL) != 0) return -1;
    return ends[0];
}
