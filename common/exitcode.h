/* exitcode: the exit statuses every program of the kit uses (kernels, peers, runner, plot).
 * The runner maps them onto a cell's status when a program ends without a result line. */
#ifndef REPRO_EXITCODE_H
#define REPRO_EXITCODE_H

enum {
  REPRO_EXIT_OK = 0,           /* done, results written */
  REPRO_EXIT_ERROR = 1,        /* failed (a message on stderr says why) */
  REPRO_EXIT_USAGE = 2,        /* bad command line or bad input file */
  REPRO_EXIT_OOM = 3,          /* out of device or host memory */
  REPRO_EXIT_UNSUPPORTED = 4,  /* this system cannot run this cell */
  REPRO_EXIT_CHECK_FAILED = 5, /* ran, but the result disagrees with the reference */
};

#endif
