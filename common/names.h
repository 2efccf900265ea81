/* names: what may name a system, a device, an experiment, a log file: [A-Za-z0-9._-]+, not
 * starting with '.', at most 200 bytes. Safe as a file name and as a shell word. */
#ifndef REPRO_NAMES_H
#define REPRO_NAMES_H

#define REPRO_NAME_MAX 200

int repro_is_name(const char *s);

#endif
