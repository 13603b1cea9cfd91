/* CAnchors.h — bare codec-library calls for benchmarks and independent test references. */
#ifndef CANCHORS_H
#define CANCHORS_H
#include <stddef.h>
#include <stdint.h>
#endif
