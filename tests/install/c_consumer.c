/* A C program built against the installed swr with nothing but `pkg-config --cflags --libs swr`:
   it proves swr/swr.h is plain C and the library links. Opens the catalog given, asks for a GEMM
   lookup and prints the JSON; for a bad path, prints the status and message. Exit: 0 when the
   lookup answers, 2 for a bad argument, 1 otherwise. */
#include <stdio.h>

#include "swr/swr.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_consumer CATALOG\n");
    return 2;
  }
  swr_catalog* catalog = NULL;
  swr_status status = swr_catalog_open(argv[1], &catalog);
  if (status != SWR_OK) {
    printf("%s: %s\n", swr_status_name(status), swr_last_error());
    return status == SWR_ERROR_INVALID_ARGUMENT ? 2 : 1;
  }
  const swr_gemm_problem problem = {4096, 4096, 4096, "f16"};
  char* json = NULL;
  status = swr_best_gemm(catalog, "h200", &problem, &json);
  if (status == SWR_OK) printf("swr %s: %s\n", swr_version(), json);
  swr_string_free(json);
  swr_catalog_close(catalog);
  return status == SWR_OK ? 0 : 1;
}
