fn main() {
    println!("seisimage {}", env!("CARGO_PKG_VERSION"));
}
