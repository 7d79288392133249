/* Reading a dump folder's manifest.json (written by tools/dump.c, tools/dump_ort.py, tools/dump_torch.py). */
#pragma once

#include "minirt/minirt.h"

typedef struct manifest_entry {
    char *name; /* the tensor's name in the model */
    char *file; /* its .npy, relative to the dump folder */
} manifest_entry;

/* Parse `path` with json-c: an object whose "tensors" is an array of objects, each with string "name" and "file".
   Other members (provenance, statistics, producers) are ignored. Errors name the file and what is wrong: invalid
   JSON (with json-c's reason), a missing or mistyped member (by the entry's index), a file that leaves the folder
   (absolute or with a '..' component) and a name given twice. */
mrt_status manifest_read(const char *path, manifest_entry **entries, int *n);
void manifest_free(manifest_entry *entries, int n);
