set datafile separator ','
set datafile missing ''
set terminal pngcairo size 900,550 noenhanced font ',10'
set output 'docs/figures/smooth-acf.png'
set title 'Autocorrelation of the delay in time (t_h = half-life)'
set xlabel 'Lag (t_h)'
set ylabel 'Autocorrelation'
set grid
set xrange [0:5]
set yrange [-0.1:1]
set key top right
plot 'docs/figures/smooth-acf.csv' every ::1 using ($4):(strcol(2) eq 'smooth' ? $5 : 1/0) with points pt 7 ps 0.6 lc rgb '#1b9e77' title 'smooth, measured', \
     '' every ::1 using ($4):(strcol(2) eq 'correlated' ? $5 : 1/0) with points pt 5 ps 0.6 lc rgb '#d95f02' title 'correlated, measured', \
     '' every ::1 using ($4):(strcol(2) eq 'smooth' ? $8 : 1/0) with lines lw 1.5 lc rgb '#1b9e77' title '(1 + a tau) e^(-a tau), a t_h = 1.678', \
     '' every ::1 using ($4):(strcol(2) eq 'smooth' ? $7 : 1/0) with lines lw 1.5 dt 2 lc rgb '#d95f02' title '0.5^(tau / t_h)'
