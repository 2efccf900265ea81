/* reporoot: the walk up to .repro-root (reporoot.h). */
#include "reporoot.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strbuf.h"

char *repro_root_find(const char *path) {
  char *at = realpath(path, NULL);
  while (at) {
    char *marker = xasprintf("%s/%s", at, REPRO_ROOT_MARKER);
    struct stat st;
    int found = stat(marker, &st) == 0;
    free(marker);
    if (found) return at;
    char *slash = strrchr(at, '/');
    if (!slash || (slash == at && at[1] == '\0')) break; /* "/" has no marker */
    if (slash == at)
      at[1] = '\0'; /* "/x" -> "/" */
    else
      *slash = '\0';
  }
  free(at);
  return NULL;
}
