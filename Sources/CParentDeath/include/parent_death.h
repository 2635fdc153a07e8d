#ifndef WEFT_CPARENTDEATH_H
#define WEFT_CPARENTDEATH_H

/* A testing aid shared by `weft` and `weft-sim`: a process started with WEFT_DIE_WITH_PARENT=PID, PID being
   its parent's, is killed (SIGKILL) as soon as that parent ends, however it ends (a crash, SIGKILL, a CI
   timeout). Tests set it on every child they start so that no daemon outlives a test process that died.
   Foundation's Process runs no code between fork and exec, so the child arranges it itself, at start. */
#define WEFT_PARENT_DEATH_VARIABLE "WEFT_DIE_WITH_PARENT"

/* What weft_parent_death_arm did. */
typedef enum __attribute__((enum_extensibility(closed))) WeftParentDeath {
    /* The variable is unset or empty: nothing changes. */
    WeftParentDeathNotAsked = 0,
    /* The death signal is set, the parent is the one named, and the variable now names this process. */
    WeftParentDeathArmed = 1,
    /* The variable is not a process id (a decimal number from 1). */
    WeftParentDeathInvalidValue = 2,
    /* The parent is not the process named: it ended before the signal was set (this process was handed to
       another), or the variable was inherited from a grandparent. */
    WeftParentDeathNotParent = 3,
    /* pidfd_open(2) or the watching thread failed (errno says why), or the system has no pidfd (not Linux). */
    WeftParentDeathUnavailable = 4,
} WeftParentDeath;

/* Reads WEFT_DIE_WITH_PARENT and, when it names a pid, opens a pidfd on that process (Linux 5.3 on) and
   starts a thread that waits on it and kills this process (SIGKILL) when the parent ends, then checks that
   the parent is still that pid: one that died before left nobody to watch. A pidfd follows the parent
   *process*: unlike prctl's parent-death signal, which fires when the parent's starting *thread* ends, it
   lets a parent start children from any thread (Swift concurrency's worker threads come and go).
   Once armed, the variable is set to this process's own pid, so that a child it starts (weft-sim's
   determinism run) dies with it in turn.
   Call it first thing in main, before other threads start (it changes the environment).
   `parent` receives the parent's pid when the result is WeftParentDeathNotParent. */
WeftParentDeath weft_parent_death_arm(int *parent);

/* weft_parent_death_arm, for a command's start: NULL when it armed or was not asked, else the sentence a
   usage error prints (what is wrong with the variable), held in a static buffer. */
const char *weft_parent_death_arm_or_explain(void);

#endif
