#ifndef C_SIWA_APP_FILES_H
#define C_SIWA_APP_FILES_H

#include <stddef.h>

// The files of SiwaApp's HTTP face that ship inside the binary, compiled in by SiwaAppFiles.c.
// Each function sets *length to the file's byte count and returns its bytes, which are constant
// and live as long as the process.

/// HTTP/API/OpenAPI/openapi.json: the OpenAPI document served at /openapi.json.
const unsigned char *_Nonnull siwa_file_openapi_json(size_t *_Nonnull length);
/// HTTP/Pages/Static/siwa.css: the pages' stylesheet.
const unsigned char *_Nonnull siwa_file_siwa_css(size_t *_Nonnull length);
/// HTTP/Pages/Static/siwa.js: the pages' one script (Sign in with Apple JS in popup mode).
const unsigned char *_Nonnull siwa_file_siwa_js(size_t *_Nonnull length);
/// HTTP/Pages/Static/console.css: the console's stylesheet.
const unsigned char *_Nonnull siwa_file_console_css(size_t *_Nonnull length);
/// HTTP/Pages/Strings/pages.en.txt: the pages' words in English.
const unsigned char *_Nonnull siwa_file_pages_en_txt(size_t *_Nonnull length);
/// HTTP/Pages/Strings/pages.ko.txt: the pages' words in Korean.
const unsigned char *_Nonnull siwa_file_pages_ko_txt(size_t *_Nonnull length);

#endif
