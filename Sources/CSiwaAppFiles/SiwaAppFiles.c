#include "CSiwaAppFiles.h"

// C23's #embed, as in CCommonPasswords: each file's bytes become an array's initializer at
// compile time. SwiftPM's .embedInCode wrote these files out as Swift array literals that took
// 30 s to compile in a debug build, on the path every build of SiwaApp waits on. The files stay
// beside the Swift that uses them (paths are relative to this file); the compiler records them
// as dependencies, so editing one rebuilds this file. The pragma keeps clang's remark that
// #embed is a C23 extension in gnu17 out of a build that has no warnings.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc23-extensions"
static const unsigned char openapi_json[] = {
#embed "../SiwaApp/HTTP/API/OpenAPI/openapi.json"
};
static const unsigned char siwa_css[] = {
#embed "../SiwaApp/HTTP/Pages/Static/siwa.css"
};
static const unsigned char siwa_js[] = {
#embed "../SiwaApp/HTTP/Pages/Static/siwa.js"
};
static const unsigned char console_css[] = {
#embed "../SiwaApp/HTTP/Pages/Static/console.css"
};
static const unsigned char pages_en_txt[] = {
#embed "../SiwaApp/HTTP/Pages/Strings/pages.en.txt"
};
static const unsigned char pages_ko_txt[] = {
#embed "../SiwaApp/HTTP/Pages/Strings/pages.ko.txt"
};
#pragma clang diagnostic pop

#define FILE_FUNCTION(name) \
    const unsigned char *siwa_file_##name(size_t *length) { \
        *length = sizeof name; \
        return name; \
    }

FILE_FUNCTION(openapi_json)
FILE_FUNCTION(siwa_css)
FILE_FUNCTION(siwa_js)
FILE_FUNCTION(console_css)
FILE_FUNCTION(pages_en_txt)
FILE_FUNCTION(pages_ko_txt)
