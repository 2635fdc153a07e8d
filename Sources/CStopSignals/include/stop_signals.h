#ifndef WEFT_CSTOPSIGNALS_H
#define WEFT_CSTOPSIGNALS_H

/* Routes SIGINT, SIGTERM and SIGHUP into a pipe, for the whole life of the process: the handler only
   writes the signal's number, as one byte, to the pipe (write(2) is async-signal-safe; it allocates, locks and logs
   nothing), and a thread reads the other end and acts outside the handler. A signal arriving before
   anyone reads waits in the pipe; once the pipe is full (thousands of unread signals), more are dropped.

   Returns the read end (close-on-exec), or -1 with errno set when the pipe or a handler cannot be made.
   Call it once. */
int weft_stop_signals_route(void);

#endif
