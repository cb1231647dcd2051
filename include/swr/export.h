/* SWR_API marks what libswr_runtime.so exports: the public classes and functions of include/swr/
   and the C API (swr/swr.h). The layers in that library are compiled with -fvisibility=hidden,
   so everything not marked (the database, generator and driver layers it embeds) stays inside.
   Plain C as well as C++, since swr/swr.h includes it. */
#ifndef SWR_EXPORT_H
#define SWR_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define SWR_API __attribute__((visibility("default")))
#else
#define SWR_API
#endif

#endif
