// Links libyirage.so: from YIRAGE_LIB_DIR when set (the Meson build tree), else the system's.
fn main() {
    println!("cargo:rerun-if-env-changed=YIRAGE_LIB_DIR");
    if let Ok(dir) = std::env::var("YIRAGE_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=yirage");
}
