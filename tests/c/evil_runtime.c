/*
 * A "GPU runtime" that a less privileged user could write: its constructor records that it
 * ran, and with which effective user, in the file $EVIL_MARKER names. tests/security.rs points
 * HIPFILE_*_LIBRARY at it; a set-user-ID program must never load it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void evil(void) {
    const char *marker = getenv("EVIL_MARKER");
    if (marker == NULL)
        return;
    FILE *f = fopen(marker, "a");
    if (f != NULL) {
        fprintf(f, "loaded with euid %d\n", (int)geteuid());
        fclose(f);
    }
}
