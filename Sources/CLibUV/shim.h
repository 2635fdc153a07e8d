#ifndef WEFT_CLIBUV_SHIM_H
#define WEFT_CLIBUV_SHIM_H
#include <uv.h>
#endif
