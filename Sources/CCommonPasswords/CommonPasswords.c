// common-passwords.txt is the 10,000 most common passwords, most common first, from SecLists
// (https://github.com/danielmiessler/SecLists), Passwords/Common-Credentials/10k-most-common.txt
// (line endings made LF). Used under its license:
//
// MIT License
//
// Copyright (c) 2025 Daniel Miessler
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

#include "CCommonPasswords.h"

// C23's #embed: the file's bytes become this array's initializer at compile time, in well under
// a second, where SwiftPM's .embedInCode writes them out as a Swift array literal that takes
// seconds to type-check. clang takes #embed in the C dialect SwiftPM compiles with (gnu17) as an
// extension, and says so; the pragma keeps that one remark out of a build that has no warnings,
// without a compiler flag in Package.swift. The compiler records the file as a dependency, so
// editing the list rebuilds this file.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc23-extensions"
static const unsigned char list[] = {
#embed "common-passwords.txt"
};
#pragma clang diagnostic pop

const unsigned char *siwa_common_passwords(size_t *length) {
    *length = sizeof list;
    return list;
}
