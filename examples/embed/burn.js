// Burns CPU in named functions, for the embedding example (examples/embed): the driver
// calls burn(ms). Each name is the one the spec's trace must give its frames.

function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

const sortNumbers = function (count) {
  const values = [];
  for (let i = 0; i < count; i++) {
    values.push((i * 7919) % 10007);
  }
  values.sort((a, b) => a - b);
  return values[count >> 1];
};

class Matrix {
  constructor(size) {
    this.size = size;
    this.cells = new Float64Array(size * size).fill(1.5);
  }

  multiply(other) {
    const n = this.size;
    const out = new Matrix(n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let k = 0; k < n; k++) {
          sum += this.cells[i * n + k] * other.cells[k * n + j];
        }
        out.cells[i * n + j] = sum;
      }
    }
    return out;
  }
}

function burn(ms) {
  const end = Date.now() + ms;
  let sink = 0;
  while (Date.now() < end) {
    sink += fib(20);
    sink += sortNumbers(8000);
    sink += new Matrix(40).multiply(new Matrix(40)).cells[0];
  }
  return sink;
}
