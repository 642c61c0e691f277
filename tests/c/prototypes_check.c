/*
 * prototypes_check.c - the Rust side's exported signatures must equal the header's.
 *
 * tests/header_prototypes.rs runs cbindgen (configured by cbindgen.toml) over the crate,
 * writing the prototypes of every `#[no_mangle] extern "C"` function of src/ffi into
 * generated_prototypes.h, and compiles this file with that directory on the include path,
 * once as C11 and once as C++17.  Both languages reject a redeclaration whose type differs
 * from the first one, so a parameter or return type in Rust that is not exactly the
 * header's (const-ness, width, signedness, enum vs. integer, pointer depth, arity) fails
 * to compile.  C++ is the stricter of the two: it also tells an enum from its underlying
 * integer type.  The test checks separately that exactly the expected names are exported.
 */

#include "hipfile.h"
#include "hipfile-stats.h"

/* cbindgen spells isize as ptrdiff_t (the same type as ssize_t on LP64 Linux). */
#include <stddef.h>

#include "generated_prototypes.h"

#ifndef HIPFILE_GENERATED_PROTOTYPES_H
#error "generated_prototypes.h is not cbindgen's output for cbindgen.toml"
#endif

/* Keep the translation unit non-empty under -pedantic. */
typedef int prototypes_check_unit;
